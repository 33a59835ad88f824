import { afterAll, beforeAll } from "vitest";
import type { Clock } from "../../src/core/clock";
import { startClockedServer } from "./clockedServer";
import { startTestServer, type TestServer } from "./server";
import { startSink, type Sink } from "./sink";

export interface ServerOptions {
  /**
   * HOOKRELAY_* settings on top of the test server's own (test/helpers/server.ts);
   * a function when they name something an earlier beforeAll starts (a mail server's port).
   */
  env?: Record<string, string> | (() => Record<string, string>);
  /** Time the test moves by hand; the key is then made without a session (test/helpers/clockedServer.ts). */
  clock?: Clock;
  /** Also start a sink (test/helpers/sink.ts) for deliveries to land on. */
  sink?: boolean;
  /** Also make an API key of scope read (not with a clock: a clocked server has the one key). */
  readKey?: boolean;
  /** The delivery work's safety poll (src/server.ts, StartOptions): long, to show that a delivery does not wait for it. */
  pollMs?: number;
}

export interface ServerFixture {
  server: TestServer;
  /** An API key with every scope. */
  key: string;
}

/** What `started` receives: the sink and the read key only when the options ask for them. */
export type Started<O extends ServerOptions> = ServerFixture & (O extends { sink: true } ? { sink: Sink } : unknown) & (O extends { readKey: true } ? { readKey: string } : unknown);

/**
 * The set-up most test files share: one real server over the run's store for
 * the file (or the describe it is called in), an API key, and a sink when
 * asked; all closed afterwards. `started` hands them over once they run, so
 * a test file keeps its own `server`, `key` and `sink` variables:
 *
 *     let server: TestServer, key: string, sink: Sink;
 *     useServer({ sink: true }, (s) => ({ server, key, sink } = s));
 *
 * A file's own beforeAll, registered after this call, runs after the server
 * is up; its own afterAll runs before the server closes (vitest's "stack"
 * hook order).
 */
export function useServer<O extends ServerOptions>(options: O, started: (fixture: Started<O>) => void): void {
  let server: TestServer | undefined;
  let sink: Sink | undefined;
  beforeAll(async () => {
    const env = typeof options.env === "function" ? options.env() : options.env;
    let key: string;
    let readKey: string | undefined;
    if (options.clock && options.readKey) throw new Error("a clocked server has one key: no read key");
    const start = { pollMs: options.pollMs };
    if (options.clock) ({ server, key } = await startClockedServer(options.clock, env, start));
    else {
      server = await startTestServer(env, undefined, undefined, undefined, start);
      key = await server.apiKey();
    }
    if (options.readKey) readKey = await server.apiKey("read");
    if (options.sink) sink = startSink();
    // Started<O> promises a sink and a read key exactly when they were asked for.
    started({ server, key, readKey, sink } as unknown as Started<O>);
  });
  afterAll(async () => {
    await server?.close();
    sink?.close();
  });
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { BINARY, cliEnv, ensureBinary } from "./helpers";

/**
 * The compiled binary piped into `head -1`, as a user types it: once head has
 * its line and exits, the next write hits a closed pipe (EPIPE). The command
 * must end quietly with exit 0, not crash with a stack trace.
 */
let server: TestServer;
let sink: Sink;
let env: Record<string, string>;
let source: { id: string; ingest_url: string };

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBinary()]);
  sink = startSink();
  const key = await server.apiKey();
  env = cliEnv({ HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key });
  source = (await call(server, "POST", "/v1/sources", { key, body: { name: "piped" } })).body.source;
});
afterAll(async () => {
  sink.close();
  await server.close();
});

/** `set -o pipefail; hookrelay ARGS | head -1`: the pipeline's status is hookrelay's unless head fails. */
function pipeToHead(args: string[]) {
  const quoted = [BINARY, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  const proc = Bun.spawn(["bash", "-c", `set -o pipefail; ${quoted} | head -1`], { env, stdout: "pipe", stderr: "pipe" });
  const stdout = new Response(proc.stdout).text();
  const stderr = new Response(proc.stderr).text();
  return { proc, done: async () => ({ code: await proc.exited, stdout: await stdout, stderr: await stderr }) };
}

/** Feeds the source until the pipeline ends: the first event fills head's line, a later one meets the closed pipe. */
async function ingestUntilExit(proc: Bun.Subprocess) {
  const until = Date.now() + 15_000;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (!exited && Date.now() < until) {
    await fetch(source.ingest_url, { method: "POST", body: '{"n":1}' });
    await Bun.sleep(100);
  }
  if (!exited) proc.kill();
}

describe("a closed stdout pipe", () => {
  it("completion fish | head -1: the first line, exit 0, nothing on stderr", async () => {
    const r = await pipeToHead(["completion", "fish"]).done();
    expect(r.stdout).toBe("# hookrelay completion for fish: hookrelay completion fish | source\n");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("events tail --json | head -1: one event, then exit 0 without a stack trace", async () => {
    const run = pipeToHead(["events", "tail", "--json"]);
    await ingestUntilExit(run.proc);
    const r = await run.done();
    expect(JSON.parse(r.stdout)).toMatchObject({ source_id: source.id });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("listen --json | head -1: one forwarded event, then exit 0 without a stack trace", async () => {
    const run = pipeToHead(["listen", source.id, "--forward", sink.url, "--json"]);
    await ingestUntilExit(run.proc);
    const r = await run.done();
    expect(JSON.parse(r.stdout)).toMatchObject({ source_id: source.id, status: 200 });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});

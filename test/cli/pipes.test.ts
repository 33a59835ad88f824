import { beforeAll, describe, expect, it } from "vitest";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";
import { walk } from "../../cli/commands/help";
import { buildProgram } from "../../cli/program";
import { BINARY, cliEnv, ensureBinary } from "./helpers";

/**
 * The compiled binary piped into `head -1`, as a user types it: once head has
 * its line and exits, the next write hits a closed pipe (EPIPE). The command
 * must end quietly with exit 0, not crash with a stack trace.
 */
let server: TestServer, key: string, sink: Sink;
let env: Record<string, string>;
let source: { id: string; ingest_url: string };

beforeAll(() => ensureBinary());
useServer({ sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  env = cliEnv({ HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key });
  source = (await call(server, "POST", "/v1/sources", { key, body: { name: "piped" } })).body.source;
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

describe("--help into a closed pipe", () => {
  // Help is written while commander parses, before any action runs. Behind
  // `| head -1` the failing write is a race (the reader may or may not be gone
  // by the second write), so: every command once against a reader that closed
  // before the first write (the failure every time, no race), and the commands
  // that were seen crashing 20 times each behind a real `head -1`. A few at once.
  const commands = walk(buildProgram())
    .filter(({ cmd }) => cmd.name() !== "help")
    .map(({ path }) => path);
  const quote = (args: string[]) => args.map((a) => `'${a}'`).join(" ");

  async function run(script: string[]) {
    const proc = Bun.spawn(script, { env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { stdout, stderr, code };
  }
  async function inBatches<T>(items: T[], each: (item: T) => Promise<string | null>) {
    const failures: string[] = [];
    const queue = [...items];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
          const failure = await each(item);
          if (failure) failures.push(failure);
        }
      }),
    );
    return failures;
  }

  it("every command's --help into a pipe whose reader has gone: exit 0, nothing on stderr", async () => {
    expect(commands.length).toBeGreaterThan(50);
    // perl makes the pipe, closes its read end, and execs the binary with the write end as stdout.
    const closedReader = 'pipe(R, W) or die; close R; open(STDOUT, ">&", \\*W) or die; close W; exec @ARGV or die';
    const failures = await inBatches(commands, async (path) => {
      const r = await run(["perl", "-e", closedReader, BINARY, ...path, "--help"]);
      return r.code === 0 && r.stderr === "" ? null : `${path.join(" ")}: exit ${r.code}, stderr ${r.stderr.slice(0, 200)}`;
    });
    expect(failures).toEqual([]);
  }, 300_000);

  it("--help | head -1, 20 times each for the commands that crashed: exit 0, nothing on stderr", async () => {
    const seenCrashing = [["alerts", "create"], ["sources", "create"], ["serve"], ["attempts", "redrive"]];
    const failures = await inBatches(seenCrashing, async (path) => {
      const script = `for i in $(seq 1 20); do ${quote([BINARY, ...path, "--help"])} | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"; done`;
      const r = await run(["bash", "-c", script]);
      const codes = r.stdout.trim().split("\n");
      const ok = codes.length === 20 && codes.every((c) => c === "0") && r.stderr === "";
      return ok ? null : `${path.join(" ")}: exits ${codes.join(",")}; stderr ${r.stderr.slice(0, 200)}`;
    });
    expect(failures).toEqual([]);
  }, 300_000);
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, storeEnv } from "../helpers/database";
import { createServer } from "node:net";
import { ADMIN, tempDir } from "../helpers/server";
import { BINARY, ensureBinary } from "./helpers";

/**
 * `hookrelay serve` whose stdout (or stderr) is a pipe nobody reads any more,
 * as when the `| tee` or log shipper in front of it goes away. The server must
 * keep serving and keep logging on the stream it still has.
 */
beforeAll(() => ensureBinary());
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await dropStore(dir);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** perl makes a pipe, closes its read end, puts the write end on fd N and execs the binary. */
function closedReaderOn(fd: 1 | 2) {
  const handle = fd === 1 ? "STDOUT" : "STDERR";
  return `pipe(R, W) or die; close R; open(${handle}, ">&", \\*W) or die; close W; exec @ARGV or die`;
}

async function startServe(closed: 1 | 2) {
  const dataDir = tempDir("hookrelay-serve-pipes-");
  dirs.push(dataDir);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dataDir,
    HOOKRELAY_ADMIN_EMAIL: ADMIN.email,
    HOOKRELAY_ADMIN_PASSWORD: ADMIN.password,
    HOOKRELAY_LOG_FORMAT: "json",
    ...(await storeEnv(dataDir)),
  };
  const proc = Bun.spawn(["perl", "-e", closedReaderOn(closed), BINARY, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], {
    cwd: dataDir,
    env,
    stdin: "ignore",
    stdout: closed === 1 ? "ignore" : "pipe",
    stderr: closed === 2 ? "ignore" : "pipe",
  });
  let text = "";
  const open = closed === 1 ? proc.stderr : proc.stdout;
  void (async () => {
    for await (const chunk of open as ReadableStream<Uint8Array>) text += new TextDecoder().decode(chunk);
  })();
  let exitCode: number | null = null;
  void proc.exited.then((code) => (exitCode = code));
  const waitFor = async (what: RegExp, timeoutMs = 30_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const m = what.exec(text);
      if (m) return m;
      if (exitCode !== null) throw new Error(`serve exited with ${exitCode}; it printed:\n${text}`);
      if (Date.now() > until) throw new Error(`no ${what} in ${timeoutMs} ms; the open stream has:\n${text}`);
      await Bun.sleep(25);
    }
  };
  const url = (await waitFor(/listening on (http:\/\/\S+)/))[1]!;
  return { url, proc, waitFor, output: () => text, exitCode: () => exitCode };
}

/** Logs in, makes a key and a route to a closed port, so each event makes the worker log a failed delivery. */
async function failingDelivery(url: string) {
  const login = await fetch(`${url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
  expect(login.status).toBe(200);
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const keyRes = await fetch(`${url}/v1/auth/api-keys`, { method: "POST", headers: { cookie, origin: url, "content-type": "application/json" }, body: JSON.stringify({ name: "pipes" }) });
  const key = ((await keyRes.json()) as { key: string }).key;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
    return (await res.json()) as any;
  };
  const source = (await post("/v1/sources", { name: "piped" })).source;
  const destination = (await post("/v1/destinations", { name: "gone", url: `http://127.0.0.1:${await freePort()}/hook`, max_retries: 0 })).destination;
  await post("/v1/connections", { name: "c", source_id: source.id, destination_id: destination.id });
  const res = await fetch(source.ingest_url.replace(/^http:\/\/[^/]+/, url), { method: "POST", body: '{"n":1}' });
  expect(res.status).toBe(200);
}

describe("serve with a log stream whose reader has gone", () => {
  it("stdout closed: keeps answering /healthz and logs to stderr instead", async () => {
    const serve = await startServe(1);
    try {
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
      // The log line written while starting went to stderr when stdout failed.
      await serve.waitFor(/"msg":"node started"/);
      await failingDelivery(serve.url);
      await serve.waitFor(/"msg":"delivery failed[^"]*"/);
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
      expect(serve.exitCode()).toBeNull();
    } finally {
      serve.proc.kill("SIGTERM");
      await serve.proc.exited;
    }
  }, 90_000);

  it("stderr closed: keeps answering /healthz and prints its status lines on stdout", async () => {
    const serve = await startServe(2);
    try {
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
      expect(serve.output()).toMatch(/admin UI {2}http:/);
      await failingDelivery(serve.url);
      await serve.waitFor(/"msg":"delivery failed[^"]*"/);
      serve.proc.kill("SIGTERM");
      // The shutdown line too: stderr is gone, stdout still has a reader.
      await serve.waitFor(/SIGTERM: stopping intake/);
      expect(await serve.proc.exited).toBe(0);
    } finally {
      serve.proc.kill("SIGTERM");
      await serve.proc.exited;
    }
  }, 90_000);
});

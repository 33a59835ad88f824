import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, cliEnv } from "../cli/helpers";
import { startTestServer, type TestServer } from "../helpers/server";

describe("hookrelay healthcheck", () => {
  let server: TestServer;
  let unready: ReturnType<typeof Bun.serve>;
  beforeAll(async () => {
    server = await startTestServer();
    // What a server whose database is gone answers.
    unready = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ status: "unavailable", database: "unavailable" }, { status: 503 }) });
  });
  afterAll(async () => {
    unready.stop(true);
    await server.close();
  });

  it("exits 0 when /readyz answers 200, from --url or from HOOKRELAY_PORT", async () => {
    const byUrl = await cli(["healthcheck", "--url", server.url], { env: cliEnv() });
    expect(byUrl).toMatchObject({ code: 0, stdout: `ok: ${server.url}/readyz\n` });
    const byPort = await cli(["healthcheck", "--json"], { env: cliEnv({ HOOKRELAY_PORT: String(server.port) }) });
    expect(byPort.code, byPort.stderr).toBe(0);
    expect(byPort.json()).toMatchObject({ status: "ok", database: "ok" });
  });

  it("exits 1 with one line when the server is not ready, not there, or too slow", async () => {
    const notReady = await cli(["healthcheck", "--url", `http://127.0.0.1:${unready.port}`], { env: cliEnv() });
    expect(notReady.code).toBe(1);
    expect(notReady.stderr).toMatch(/^error \(unhealthy\): http:\/\/127\.0\.0\.1:\d+\/readyz answered 503 /);
    const gone = await cli(["healthcheck", "--url", "http://127.0.0.1:9"], { env: cliEnv() });
    expect(gone.code).toBe(1);
    expect(gone.stderr.trim().split("\n")).toHaveLength(1);
    expect(gone.stderr).toContain("/readyz: connection refused (ECONNREFUSED)");
    const hang = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    try {
      const slow = await cli(["healthcheck", "--url", `http://127.0.0.1:${hang.port}`, "--timeout", "300"], { env: cliEnv() });
      expect(slow.code).toBe(1);
      expect(slow.stderr).toContain("no answer within 300 ms");
    } finally {
      hang.stop(true);
    }
  });
});

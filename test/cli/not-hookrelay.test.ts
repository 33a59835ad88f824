import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, cliEnv, ensureBinary } from "./helpers";

/**
 * Pointed at an HTTP server that is not hookrelay, the CLI must say so
 * (exit 1, "not a hookrelay server at URL?") instead of printing nothing and
 * exiting 0. The servers here are real local HTTP servers answering as such
 * servers do: `{}` to everything, an HTML page to everything, an HTML 404.
 */
type Server = ReturnType<typeof Bun.serve>;
const servers: Record<string, Server> = {};

beforeAll(async () => {
  await ensureBinary();
  const html = (status: number) => new Response("<!doctype html><html><body>Welcome</body></html>", { status, headers: { "content-type": "text/html; charset=utf-8" } });
  servers.emptyJson = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({}) });
  servers.htmlPage = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => html(200) });
  servers.html404 = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => html(404) });
});
afterAll(() => {
  for (const s of Object.values(servers)) s.stop(true);
});

const urlOf = (name: string) => `http://127.0.0.1:${servers[name]!.port}`;
const run = (name: string, args: string[]) => cli(args, { env: cliEnv({ HOOKRELAY_URL: urlOf(name), HOOKRELAY_API_KEY: "hr_anything" }), binary: true });

describe("a server that is not hookrelay", () => {
  it("sources list: exit 1 and the question on stderr, for {} and for an HTML page", async () => {
    for (const name of ["emptyJson", "htmlPage", "html404"]) {
      const r = await run(name, ["sources", "list"]);
      expect(r.code, name).toBe(1);
      expect(r.stdout, name).toBe("");
      expect(r.stderr, name).toContain(`not a hookrelay server at ${urlOf(name)}?`);
    }
  });

  it("--json: the error body on stderr, code bad_response", async () => {
    const r = await run("emptyJson", ["sources", "list", "--json"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.errorJson().error).toMatchObject({ code: "bad_response", message: expect.stringContaining("not a hookrelay server at") });
  });

  it("every kind of call is checked: a get, a job, whoami, the event stream", async () => {
    const results = await Promise.all([
      run("emptyJson", ["sources", "get", "src_0123456789abcdef0123456789abcdef"]),
      run("emptyJson", ["replay", "status", "0123456789abcdef0123456789abcdef"]),
      run("htmlPage", ["whoami"]),
      run("emptyJson", ["events", "tail", "--json"]),
    ]);
    for (const r of results) {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain("not a hookrelay server at");
    }
  });

  it("a URL where nothing listens: exit 1, the failure in words once", async () => {
    const r = await cli(["sources", "list", "--url", "http://127.0.0.1:9", "--api-key", "hr_x"], { env: cliEnv() });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("error (connection_failed): cannot reach http://127.0.0.1:9: connection refused (ECONNREFUSED)");
  });

  it("login to it fails the same way", async () => {
    const r = await cli(["login", "--url", urlOf("htmlPage"), "--email", "a@example.com", "--password", "x"], { env: cliEnv(), binary: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`not a hookrelay server at ${urlOf("htmlPage")}?`);
  });
});

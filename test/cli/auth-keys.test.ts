import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { onPostgres, storeArgs } from "../helpers/database";
import { cli, cliEnv, ensureBinary } from "./helpers";

/**
 * The CLI as a real process against a real server (remote mode) and the same
 * server's data dir opened directly (local mode, while it runs).
 */
let server: TestServer;
let env: Record<string, string>;
beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBinary()]);
  env = cliEnv();
});
afterAll(() => server.close());

const local = () => server.storeArgs;

describe("local mode", () => {
  it("keys create --name NAME --data-dir DIR --json prints exactly the created key, which the running server accepts", async () => {
    const r = await cli(["keys", "create", "--name", "local-ci", ...server.storeArgs, "--json"], { env });
    expect(r.code).toBe(0);
    const body = r.json();
    expect(Object.keys(body).sort()).toEqual(["created_at", "id", "key", "key_prefix", "name", "scopes"]);
    expect(body).toMatchObject({ name: "local-ci", scopes: "*", key_prefix: body.key.slice(0, 12) });
    expect(body.id).toMatch(/^ak_[0-9a-f]{32}$/);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect((await call(server, "GET", "/v1/auth/me", { key: body.key })).status).toBe(200);
  });

  it("prints plain tab-separated rows without a terminal and without --json", async () => {
    const r = await cli(["keys", "list", ...local()], { env });
    expect(r.code).toBe(0);
    const row = r.stdout.split("\n").find((l) => l.includes("local-ci"))!;
    expect(row.split("\t")[0]).toMatch(/^ak_[0-9a-f]{32}$/);
    expect(row.split("\t")).toHaveLength(8);
    expect(r.stdout).not.toMatch(/\u001b\[/);
  });

  it("creates and migrates a fresh data dir on first use, like serve", async () => {
    const dir = join(tempDir(), "fresh");
    const r = await cli(["keys", "create", "--name", "first", ...(await storeArgs(dir)), "--json"], { env: { ...env, HOOKRELAY_ADMIN_PASSWORD: "x-password-x" } });
    expect(r.code).toBe(0);
    expect(r.json().name).toBe("first");
    // On PostgreSQL the fresh store is the dir's own empty database (test/helpers/database.ts).
    if (!onPostgres) expect(existsSync(join(dir, "hookrelay.db"))).toBe(true);
  });
});

describe("remote mode", () => {
  it("login saves a 0600 profile; keys via the session give the same JSON as local mode", async () => {
    const login = await cli(["login", "--url", server.url, "--json"], { env: { ...env, HOOKRELAY_EMAIL: ADMIN.email, HOOKRELAY_PASSWORD: ADMIN.password } });
    expect(login.code).toBe(0);
    expect(login.json()).toEqual({ user: { id: expect.any(String), email: ADMIN.email } });
    const file = join(env.XDG_CONFIG_HOME!, "hookrelay", "profiles.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8")).profiles.default.url).toBe(server.url);

    // A mutation through the session passes the server's CSRF check (Origin is sent).
    const created = await cli(["keys", "create", "--name", "remote-ci", "--scopes", "read", "--json"], { env });
    expect(created.code).toBe(0);
    expect(created.json()).toMatchObject({ name: "remote-ci", scopes: "read" });

    const [remote, localList] = [await cli(["keys", "list", "--json"], { env }), await cli(["--json", "keys", "list", ...local()], { env })];
    expect(remote.code).toBe(0);
    expect(remote.json()).toEqual(localList.json());
    expect(remote.json().api_keys.map((k: { name: string }) => k.name)).toEqual(expect.arrayContaining(["local-ci", "remote-ci"]));

    const revoked = await cli(["keys", "revoke", created.json().id, "--json"], { env });
    expect(revoked.json()).toEqual({ success: true });
    expect((await call(server, "GET", "/v1/auth/me", { key: created.json().key })).status).toBe(401);
  });

  it("exits 4 when key management is tried with an API key (session_required), 1 on not found", async () => {
    const key = await server.apiKey();
    const r = await cli(["keys", "list", "--url", server.url, "--api-key", key, "--json"], { env });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe("");
    expect(r.errorJson().error.code).toBe("session_required");

    const human = await cli(["keys", "list"], { env: { ...env, HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key } });
    expect(human.code).toBe(4);
    expect(human.stderr.trim().split("\n")).toHaveLength(1);
    expect(human.stderr).toContain("session_required");

    const missing = await cli(["keys", "revoke", "ak_" + "0".repeat(32), ...server.storeArgs], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error \(not_found\): /);
  });

  it("exits 4 on a wrong password, a bad key, and with no server chosen", async () => {
    const wrong = await cli(["login", "--url", server.url, "--email", ADMIN.email, "--password", "nope", "--profile", "other"], { env });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain("unauthorized");

    const badKey = await cli(["whoami", "--json", "--url", server.url, "--api-key", "hr_not_a_key"], { env });
    expect(badKey.code).toBe(4);
    expect(badKey.errorJson().error.code).toBe("unauthorized");

    const nowhere = await cli(["keys", "list"], { env: cliEnv() });
    expect(nowhere.code).toBe(4);
    expect(nowhere.stderr).toContain("hookrelay login");
  });

  it("logout ends the session on the server and removes the profile", async () => {
    const env2 = cliEnv({ HOOKRELAY_PASSWORD: ADMIN.password });
    expect((await cli(["login", "--url", server.url + "/", "--email", ADMIN.email, "--profile", "two"], { env: env2 })).code).toBe(0);
    const file = join(env2.XDG_CONFIG_HOME!, "hookrelay", "profiles.json");
    const cookie = JSON.parse(readFileSync(file, "utf8")).profiles.two.cookie;
    const out = await cli(["logout", "--json"], { env: env2 });
    expect(out.code).toBe(0);
    expect(out.json()).toEqual({ success: true });
    expect(JSON.parse(readFileSync(file, "utf8")).profiles.two).toBeUndefined();
    expect((await call(server, "GET", "/v1/auth/me", { headers: { cookie } })).status).toBe(401);
  });
});

describe("whoami", () => {
  it("names the organization and environment (not only their ids), remote with a key and local", async () => {
    const key = await server.apiKey();
    const [remote, local] = await Promise.all([
      cli(["whoami", "--url", server.url, "--api-key", key], { env, binary: true }),
      cli(["whoami", ...server.storeArgs], { env, binary: true }),
    ]);
    const me = (await call(server, "GET", "/v1/auth/me", { key })).body;
    for (const r of [remote, local]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`organization default (${me.org_id})`);
      expect(r.stdout).toContain(`environment  production (${me.env_id})`);
    }
    expect(remote.stdout).toContain(`on ${server.url}`);
  });
});

describe("usage errors exit 2 with a message", () => {
  it("unknown command, missing required flag, bad choice, two modes at once, missing login input", async () => {
    const cases: [string[], RegExp][] = [
      [["nope"], /unknown command/],
      [["keys", "create", ...local()], /--name/],
      [["keys", "create", "--name", "x", "--scopes", "all", ...local()], /Allowed choices are \*, read/],
      [["keys", "list", "--url", "http://127.0.0.1:1", ...local()], /choose one mode/],
      [["login", "--url", server.url], /missing --email/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args, { env });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
    }
  });
});

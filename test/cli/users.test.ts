import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";
import { cli, cliEnv } from "./helpers";

/** `hookrelay users set-password`: the way to replace a first-start password that went to a log (README.md). */
let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

const login = (password: string) =>
  fetch(`${server.url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: ADMIN.email, password }) });

describe("users set-password", () => {
  it("sets the password from stdin in local mode and signs out the user's sessions", async () => {
    const old = await login(ADMIN.password);
    expect(old.status).toBe(200);
    const cookie = old.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    expect((await fetch(`${server.url}/v1/auth/me`, { headers: { cookie } })).status).toBe(200);

    const next = "a new password nobody has seen";
    const r = await cli(["users", "set-password", ADMIN.email.toUpperCase(), "--password-stdin", ...server.storeArgs, "--json"], { env: cliEnv(), stdin: next + "\n" });
    expect(r.code, r.stderr).toBe(0);
    // This test's session and the one that made the API key in beforeAll.
    expect(r.json()).toEqual({ email: ADMIN.email, sessions_ended: 2 });

    expect((await fetch(`${server.url}/v1/auth/me`, { headers: { cookie } })).status).toBe(401);
    expect((await login(ADMIN.password)).status).toBe(401);
    expect((await login(next)).status).toBe(200);
  });

  it("refuses a short password, an unknown user, and remote mode", async () => {
    const short = await cli(["users", "set-password", ADMIN.email, "--password-stdin", ...server.storeArgs], { env: cliEnv(), stdin: "short\n" });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/at least 12 characters/);
    const unknown = await cli(["users", "set-password", "nobody@example.com", "--password-stdin", ...server.storeArgs], { env: cliEnv(), stdin: "long enough password\n" });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not_found/);
    const remote = await cli(["users", "set-password", ADMIN.email, "--password-stdin"], { env: cliEnv({ HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key }), stdin: "long enough password\n" });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/--data-dir/);
  });
});

import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { memberships, users } from "../../src/db/schema";
import { useServer } from "../helpers/fixture";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { cli, cliEnv, modeEnvs } from "./helpers";

/** `hookrelay users reset-password`: how a locked-out or forgotten owner gets back in (docs/teams.md, "Recovery"). */
let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

const signIn = async (password: string) => {
  const res = await call(server, "POST", "/v1/auth/login", { body: { email: ADMIN.email, password } });
  return { status: res.status, headers: { cookie: (res.headers.getSetCookie()[0] ?? "").split(";")[0]!, origin: server.url } };
};
const me = (headers: Record<string, string>) => call(server, "GET", "/v1/auth/me", { headers }).then((r) => r.status);
const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, "");
const reset = (env: Record<string, string>, ...extra: string[]) => cli(["users", "reset-password", "--email", ADMIN.email, ...extra], { env });

describe("users reset-password (local mode)", () => {
  it("prints a one-time link on HOOKRELAY_BASE_URL; spending it sets the password, ends the other sessions and signs in, once", async () => {
    const old = await signIn(ADMIN.password);
    expect(old.status).toBe(200);

    const { localEnv } = modeEnvs(server, key);
    const text = await reset({ ...localEnv, HOOKRELAY_BASE_URL: "https://hooks.example.com" });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`A one-time link for ${ADMIN.email}`);
    const url = /https:\/\/hooks\.example\.com\/accept#token=\S+/.exec(text.stdout)?.[0];
    expect(url).toBeTruthy();

    // A second run replaces the first link: only the newest works.
    const json = await reset(localEnv, "--json");
    expect(json.code, json.stderr).toBe(0);
    const body = json.json();
    expect(body).toMatchObject({ user: { email: ADMIN.email }, reenabled: false });
    expect(body.url).toMatch(new RegExp(`^${server.deps.settings.baseUrl}/accept#token=`));
    expect((await call(server, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(url!), password: "from the replaced link" } })).status).toBe(400);

    const spent = await call(server, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(body.url), password: "the recovered password" } });
    expect(spent.status).toBe(200);
    expect(spent.body.user.email).toBe(ADMIN.email);
    const fresh = { cookie: spent.headers.getSetCookie()[0]!.split(";")[0]!, origin: server.url };
    expect(await me(fresh)).toBe(200);
    expect(await me(old.headers)).toBe(401);
    expect((await signIn(ADMIN.password)).status).toBe(401);
    expect((await signIn("the recovered password")).status).toBe(200);

    const again = await call(server, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(body.url), password: "spent a second time" } });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("validation_error");
  });

  it("brings back a disabled owner: the link's session works", async () => {
    const [admin] = await server.deps.db.select({ id: users.id }).from(users).where(eq(users.email, ADMIN.email));
    await server.deps.db.update(memberships).set({ status: "disabled" }).where(eq(memberships.userId, admin!.id));
    const { localEnv } = modeEnvs(server, key);
    const text = await reset(localEnv);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/owner membership was disabled: it is active again/);
    const url = /http\S+\/accept#token=\S+/.exec(text.stdout)![0];
    const spent = await call(server, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(url), password: "back from disabled" } });
    expect(spent.status).toBe(200);
    expect(await me({ cookie: spent.headers.getSetCookie()[0]!.split(";")[0]!, origin: server.url })).toBe(200);
  });

  it("answers an unknown email with a clear error", async () => {
    const { localEnv } = modeEnvs(server, key);
    const r = await cli(["users", "reset-password", "--email", "nobody@example.com"], { env: localEnv });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/User nobody@example\.com not found/);
  });

  it("refuses remote mode: only the operator on the machine may", async () => {
    const { remoteEnv } = modeEnvs(server, key);
    const r = await reset(remoteEnv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/operator on the server/);
    expect(r.stderr).toMatch(/--data-dir/);
    const missing = await cli(["users", "reset-password", ...server.storeArgs], { env: cliEnv() });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/--email/);
  });
});

describe("users reset-password on a locked-out account", () => {
  // A server of its own that believes X-Forwarded-For from 127.0.0.1: the guesses come from many addresses, so it is the account that locks.
  useServer({ env: { HOOKRELAY_TRUST_PROXY: "127.0.0.1" } }, (s) => ({ server, key } = s));
  const loginFrom = (address: string, password: string) =>
    server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": address }, body: JSON.stringify({ email: ADMIN.email, password }) }).then((r) => r.status);

  it("lifts the lock: the owner signs in again with the password the link set", async () => {
    for (let i = 0; i < 30; i++) expect(await loginFrom(`10.0.${i}.1`, `guess ${i}`)).toBe(401);
    expect(await loginFrom("10.1.0.1", ADMIN.password)).toBe(429);

    const r = await reset(modeEnvs(server, key).localEnv, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect((await call(server, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(r.json().url), password: "after the lock-out" } })).status).toBe(200);
    expect(await loginFrom("10.1.0.2", "after the lock-out")).toBe(200);
  });
});

import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { memberships } from "../../src/db/schema";
import { useServer } from "../helpers/fixture";
import { tokenOf } from "../helpers/members";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { cli, modeEnvs, ok } from "./helpers";

/** `hookrelay members`, as real processes against a real server (remote) and its store (local). */
let server: TestServer, key: string;
let remoteEnv: Record<string, string>, localEnv: Record<string, string>;
useServer({}, (s) => ({ server, key } = s));
beforeAll(() => {
  ({ remoteEnv, localEnv } = modeEnvs(server, key));
});

const email = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}@test.local`;

describe("hookrelay members add", () => {
  it("invites a new email and prints the one-time link, which signs the invitee in (remote and local)", async () => {
    for (const env of [remoteEnv, localEnv]) {
      const who = email("cli");
      const out = await cli(["members", "add", "--email", who, "--role", "developer"], { env });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain(`Invited ${who} as developer`);
      const url = /(\S+\/accept#token=\S+)/.exec(out.stdout)?.[1];
      expect(url).toBeDefined();
      const accepted = await call(server, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(url!), password: "long enough password" } });
      expect(accepted.status).toBe(200);
    }
  });

  it("prints the member and invite_url with --json; an existing member is a conflict", async () => {
    const who = email("json");
    const made = ok(await cli(["members", "add", "--email", who, "--role", "viewer", "--name", "Jay Son", "--json"], { env: localEnv }));
    expect(made).toEqual({ member: expect.objectContaining({ email: who, name: "Jay Son", role: "viewer", status: "invited" }), invite_url: expect.stringContaining("/accept#token=") });
    const again = await cli(["members", "add", "--email", ADMIN.email, "--role", "viewer", "--json"], { env: remoteEnv });
    expect(again.code).toBe(1);
    expect(again.errorJson().error.code).toBe("conflict");
  });

  it("refuses an unknown role before sending anything", async () => {
    const bad = await cli(["members", "add", "--email", email("bad"), "--role", "captain"], { env: remoteEnv });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("captain");
  });
});

describe("hookrelay members list|update|remove", () => {
  it("lists in both modes, changes the role and disables by email, removes", async () => {
    const who = email("life");
    const { member } = ok(await cli(["members", "add", "--email", who, "--role", "viewer", "--json"], { env: remoteEnv }));
    for (const env of [remoteEnv, localEnv]) {
      const listed = ok(await cli(["members", "list", "--json"], { env })).members;
      expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ email: ADMIN.email, role: "owner" }), expect.objectContaining({ email: who, role: "viewer" })]));
    }
    const table = await cli(["members", "list"], { env: remoteEnv });
    expect(table.stdout).toContain(who);

    expect(ok(await cli(["members", "update", who, "--role", "admin", "--json"], { env: localEnv })).member.role).toBe("admin");
    expect(ok(await cli(["members", "update", member.user_id, "--disabled", "--json"], { env: remoteEnv })).member.status).toBe("disabled");
    expect(ok(await cli(["members", "update", who, "--no-disabled", "--json"], { env: localEnv })).member.status).toBe("invited");

    expect(ok(await cli(["members", "remove", who, "--yes", "--json"], { env: remoteEnv }))).toEqual({ success: true });
    expect(await server.deps.db.select().from(memberships).where(eq(memberships.userId, member.user_id))).toEqual([]);
    const gone = await cli(["members", "remove", who, "--yes", "--json"], { env: localEnv });
    expect(gone.code).toBe(1);
    expect(gone.errorJson().error.code).toBe("not_found");
  });

  it("in local mode cannot leave the organization without an active owner", async () => {
    const refused = await cli(["members", "update", ADMIN.email, "--role", "admin", "--json"], { env: localEnv });
    expect(refused.code).toBe(1);
    expect(refused.errorJson().error).toMatchObject({ code: "conflict", message: expect.stringContaining("active owner") });
  });
});

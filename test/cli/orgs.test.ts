import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { ADMIN, type TestServer } from "../helpers/server";
import { cli, cliEnv, ensureBinary, modeEnvs, ok, refused } from "./helpers";

/** `hookrelay orgs` and the global `--org`, as real processes against a real server (remote) and its store (local). */
let server: TestServer, key: string;
let remoteEnv: Record<string, string>, localEnv: Record<string, string>;
/** Remote mode with the instance owner's saved session (login). */
let sessionEnv: Record<string, string>;
useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  await ensureBinary();
  ({ remoteEnv, localEnv } = modeEnvs(server, key));
  sessionEnv = cliEnv({ HOOKRELAY_EMAIL: ADMIN.email, HOOKRELAY_PASSWORD: ADMIN.password });
  ok(await cli(["login", "--url", server.url, "--json"], { env: sessionEnv }));
});

const slugs = (body: { organizations: { slug: string }[] }) => body.organizations.map((o) => o.slug);

describe("hookrelay orgs", () => {
  it("creates in both modes; lists what each caller sees; renames and deletes by slug", async () => {
    const made = ok(await cli(["orgs", "create", "--name", "Remote Org", "--json"], { env: remoteEnv }));
    expect(made.organization).toMatchObject({ name: "Remote Org", slug: "remote-org", role: "owner" });
    expect(ok(await cli(["orgs", "create", "--name", "Local Org", "--slug", "lorg", "--json"], { env: localEnv })).organization).toMatchObject({ slug: "lorg", role: "owner" });

    // Local mode and the instance owner's session see every organization; a key only its own.
    expect(slugs(ok(await cli(["orgs", "list", "--json"], { env: localEnv })))).toEqual(["default", "remote-org", "lorg"]);
    const seen = ok(await cli(["orgs", "list", "--json"], { env: sessionEnv }));
    expect(slugs(seen)).toEqual(["default", "remote-org", "lorg"]);
    // Made in local mode, the organization is the instance owner's: they are its owner.
    expect(seen.organizations.map((o: { role: string }) => o.role)).toEqual(["owner", "owner", "owner"]);
    expect(slugs(ok(await cli(["orgs", "list", "--json"], { env: remoteEnv })))).toEqual(["default"]);
    const table = await cli(["orgs", "list"], { env: sessionEnv });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("remote-org");

    expect(ok(await cli(["orgs", "update", "lorg", "--name", "Local Org 2", "--json"], { env: localEnv })).organization.name).toBe("Local Org 2");
    expect(ok(await cli(["orgs", "update", "remote-org", "--slug", "ro", "--json"], { env: sessionEnv })).organization.slug).toBe("ro");

    expect(ok(await cli(["orgs", "delete", "ro", "--yes", "--json"], { env: sessionEnv }))).toEqual({ success: true });
    expect(ok(await cli(["orgs", "delete", "lorg", "--yes", "--json"], { env: localEnv }))).toEqual({ success: true });
    expect(slugs(ok(await cli(["orgs", "list", "--json"], { env: localEnv })))).toEqual(["default"]);
  });

  it("an organization nobody may reach by that name is not_found in both modes; the one acted in is refused", async () => {
    const error = refused(await Promise.all([cli(["orgs", "delete", "no-such-org", "--yes", "--json"], { env: remoteEnv }), cli(["orgs", "delete", "no-such-org", "--yes", "--json"], { env: localEnv })]), "not_found");
    expect(error.message).toContain('"no-such-org"');
    const acting = refused(await Promise.all([cli(["orgs", "delete", "default", "--yes", "--json"], { env: remoteEnv }), cli(["orgs", "delete", "default", "--yes", "--json"], { env: localEnv })]), "conflict");
    expect(acting.message).toContain("acting in");
  });

  it("refuses to delete one whose environments hold resources unless --force", async () => {
    ok(await cli(["orgs", "create", "--name", "Held", "--json"], { env: localEnv }));
    ok(await cli(["--org", "held", "sources", "create", "--name", "kept", "--json"], { env: localEnv }));
    const no = await cli(["orgs", "delete", "held", "--yes", "--json"], { env: localEnv });
    expect(no.code, no.stderr).toBe(1);
    expect(no.errorJson().error).toMatchObject({ code: "conflict" });
    expect(no.errorJson().error.message).toContain("1 sources");
    expect(ok(await cli(["orgs", "delete", "held", "--force", "--yes", "--json"], { env: localEnv }))).toEqual({ success: true });
  });
});

describe("--org", () => {
  beforeAll(async () => {
    ok(await cli(["orgs", "create", "--name", "Elsewhere", "--json"], { env: localEnv }));
    ok(await cli(["--org", "elsewhere", "sources", "create", "--name", "in elsewhere", "--json"], { env: localEnv }));
  });

  it("in local mode picks the organization commands act in; an unknown one is refused", async () => {
    const there = ok(await cli(["sources", "list", "--json"], { env: { ...localEnv, HOOKRELAY_ORG: "elsewhere" } })).sources.map((s: { name: string }) => s.name);
    expect(there).toEqual(["in elsewhere"]);
    expect(ok(await cli(["sources", "list", "--json"], { env: localEnv })).sources.map((s: { name: string }) => s.name)).not.toContain("in elsewhere");
    expect(ok(await cli(["--org", "elsewhere", "--env", "production", "whoami", "--json"], { env: localEnv })).organization.slug).toBe("elsewhere");
    const unknown = await cli(["--org", "nope", "sources", "list", "--json"], { env: localEnv });
    expect(unknown.code).toBe(1);
    expect(unknown.errorJson().error.message).toContain('no organization "nope"');
  });

  it("with an API key, naming another organization is refused (exit 4); naming its own works", async () => {
    const other = await cli(["--org", "elsewhere", "sources", "list", "--json"], { env: remoteEnv });
    expect(other.code).toBe(4);
    expect(other.errorJson().error.message).toContain("This API key belongs to another organization");
    ok(await cli(["--org", "default", "sources", "list", "--json"], { env: remoteEnv }));
  });

  it("with a session: sent as X-Hookrelay-Org, and saved in the profile by login --org", async () => {
    const env = cliEnv({ HOOKRELAY_EMAIL: ADMIN.email, HOOKRELAY_PASSWORD: ADMIN.password });
    ok(await cli(["login", "--url", server.url, "--org", "elsewhere", "--json"], { env }));
    expect(JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME!, "hookrelay", "profiles.json"), "utf8")).profiles.default.org).toBe("elsewhere");
    const me = ok(await cli(["whoami", "--json"], { env }));
    expect(me.organization.slug).toBe("elsewhere");
    expect(ok(await cli(["sources", "list", "--json"], { env })).sources.map((s: { name: string }) => s.name)).toEqual(["in elsewhere"]);
    // --org overrides the profile's for one command (and the server remembers it, as the UI's switch does).
    expect(ok(await cli(["--org", "default", "whoami", "--json"], { env })).organization.slug).toBe("default");
    const badLogin = await cli(["login", "--url", server.url, "--org", "nope", "--json"], { env });
    expect(badLogin.code).toBe(1);
    expect(badLogin.errorJson().error.message).toBe("Organization not found");
  });
});

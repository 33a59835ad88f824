import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { ADMIN, type TestServer } from "../helpers/server";
import { cli, ensureBinary, modeEnvs, ok, refused, same } from "./helpers";

/** `hookrelay audit list`, as real processes against a real server (remote) and its store (local). */
let server: TestServer, key: string;
let remoteEnv: Record<string, string>, localEnv: Record<string, string>;
useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  await ensureBinary();
  ({ remoteEnv, localEnv } = modeEnvs(server, key));
});

const both = (args: string[]) => Promise.all([cli(args, { env: remoteEnv }), cli(args, { env: localEnv })]);

describe("hookrelay audit list", () => {
  it("shows the same entries in both modes: a remote write names its API key, a local one the local CLI", async () => {
    const remote = ok(await cli(["sources", "create", "--name", "made remotely", "--json"], { env: remoteEnv })).source;
    const local = ok(await cli(["sources", "create", "--name", "made locally", "--json"], { env: localEnv })).source;
    const listed = same(await both(["audit", "list", "--resource-type", "source", "--action", "create", "--json"]));
    expect(listed.entries.map((e: { resource_id: string }) => e.resource_id).slice(0, 2)).toEqual([local.id, remote.id]);
    expect(listed.entries[0]).toMatchObject({ actor_type: "system", actor_id: null, actor_name: "local CLI", action: "create", resource_type: "source", ip: null });
    expect(listed.entries[1]).toMatchObject({ actor_type: "api_key", actor_name: "test", action: "create", resource_type: "source", ip: "127.0.0.1" });
    expect(JSON.parse(listed.entries[0].changes).name).toEqual({ before: null, after: "made locally" });

    ok(await cli(["sources", "update", local.id, "--name", "renamed locally", "--json"], { env: localEnv }));
    const one = same(await both(["audit", "list", "--resource-id", local.id, "--json"]));
    expect(one.entries.map((e: { action: string }) => e.action)).toEqual(["update", "create"]);
    expect(one).toMatchObject({ has_more: false, next_cursor: null });
  });

  it("records the operator lifting a login lock in local mode", async () => {
    ok(await cli(["users", "unlock", ADMIN.email, "--json"], { env: localEnv }));
    const [entry] = same(await both(["audit", "list", "--action", "unlock", "--json"])).entries;
    expect(entry).toMatchObject({ actor_type: "system", actor_name: "local CLI", action: "unlock", resource_type: "user", env_id: null });
  });

  it("pages with --limit and --cursor, telling on stderr where the next page starts", async () => {
    const page = ok(await cli(["audit", "list", "--limit", "1", "--json"], { env: localEnv }));
    expect(page.entries).toHaveLength(1);
    expect(page.has_more).toBe(true);
    // Rows on stdout, the way on on stderr: a pipe gets only rows.
    const piped = await cli(["audit", "list", "--limit", "1"], { env: localEnv });
    expect(piped.stdout.trim().split("\n")).toHaveLength(1);
    expect(piped.stderr).toContain(`--cursor ${page.next_cursor}`);
    const second = ok(await cli(["audit", "list", "--limit", "1", "--cursor", page.next_cursor, "--json"], { env: remoteEnv }));
    expect(second.entries[0].id).not.toBe(page.entries[0].id);
    expect(second.entries[0].created_at <= page.entries[0].created_at).toBe(true);
  });

  it("prints rows of time, actor, action, resource type, resource id and address", async () => {
    const table = await cli(["audit", "list", "--resource-type", "source"], { env: remoteEnv });
    expect(table.code, table.stderr).toBe(0);
    const rows = table.stdout.trim().split("\n").map((r) => r.split("\t"));
    expect(rows[0]).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\dT/), "local CLI", "update", "source", expect.stringMatching(/^src_/), ""]);
    expect(rows.some((r) => r[1] === "test" && r[2] === "create" && r[5] === "127.0.0.1")).toBe(true);
  });

  it("refuses bad filters with the API's error in both modes", async () => {
    refused(await both(["audit", "list", "--after", "yesterday", "--json"]), "validation_error");
    refused(await both(["audit", "list", "--action", "Not An Action", "--json"]), "validation_error");
  });
});

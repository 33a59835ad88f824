import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestServer, type TestServer } from "../helpers/server";
import { cli, cliEnv, ensureBinary } from "./helpers";

/** The compiled dist/hookrelay (what users run): local and remote mode, from a directory with nothing beside it. */
let server: TestServer;
beforeAll(async () => {
  await ensureBinary();
  server = await startTestServer();
});
afterAll(() => server.close());

describe("dist/hookrelay", () => {
  it("creates a key in local mode, logs in, and lists keys remotely with the same JSON", async () => {
    const env = cliEnv({ HOOKRELAY_EMAIL: ADMIN.email, HOOKRELAY_PASSWORD: ADMIN.password });
    const created = await cli(["keys", "create", "--name", "from-binary", ...server.storeArgs, "--json"], { env, binary: true });
    expect(created.code).toBe(0);
    expect(Object.keys(created.json()).sort()).toEqual(["created_at", "id", "key", "key_prefix", "name", "scopes"]);

    expect((await cli(["login", "--url", server.url, "--json"], { env, binary: true })).code).toBe(0);
    const [remote, local] = await Promise.all([
      cli(["keys", "list", "--json"], { env, binary: true }),
      cli(["keys", "list", "--json", ...server.storeArgs], { env, binary: true }),
    ]);
    expect(remote.code).toBe(0);
    expect(remote.json()).toEqual(local.json());

    const sources = await cli(["sources", "list", "--json", "--api-key", created.json().key, "--url", server.url], { env, binary: true });
    expect(sources.code).toBe(0);
    expect(sources.json()).toEqual({ sources: [] });

    const usage = await cli(["sources", "frobnicate"], { env, binary: true });
    expect(usage.code).toBe(2);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { cli, cliEnv, ensureBinary, modeEnvs, ok } from "./helpers";

/** `hookrelay envs` and the global `--env`, as real processes against a real server (remote) and its store (local). */
let server: TestServer, key: string;
let remoteEnv: Record<string, string>, localEnv: Record<string, string>;
useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  await ensureBinary();
  ({ remoteEnv, localEnv } = modeEnvs(server, key));
});

describe("hookrelay envs", () => {
  it("creates and lists in both modes, renames and deletes in local mode, naming an environment by its slug; a key reaches no other environment", async () => {
    const made = ok(await cli(["envs", "create", "--name", "Remote Staging", "--json"], { env: remoteEnv }));
    expect(made.environment).toMatchObject({ name: "Remote Staging", slug: "remote-staging" });
    const madeLocal = ok(await cli(["envs", "create", "--name", "Local QA", "--slug", "lqa", "--json"], { env: localEnv }));
    expect(madeLocal.environment.slug).toBe("lqa");

    for (const env of [remoteEnv, localEnv]) {
      const slugs = ok(await cli(["envs", "list", "--json"], { env })).environments.map((e: { slug: string }) => e.slug);
      expect(slugs).toEqual(expect.arrayContaining(["production", "remote-staging", "lqa"]));
    }
    expect(ok(await cli(["envs", "update", "lqa", "--name", "Local QA 2", "--json"], { env: localEnv })).environment.name).toBe("Local QA 2");
    expect(ok(await cli(["envs", "update", "remote-staging", "--slug", "rs", "--json"], { env: localEnv })).environment.slug).toBe("rs");
    // An API key acts in its own environment only: another is unknown to it (docs/decisions.md D19).
    for (const args of [["envs", "update", "rs", "--name", "taken over", "--json"], ["envs", "delete", "rs", "--force", "--yes", "--json"]]) {
      const refused = await cli(args, { env: remoteEnv });
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.errorJson().error.code).toBe("not_found");
    }

    expect(ok(await cli(["envs", "delete", "rs", "--yes", "--json"], { env: localEnv }))).toEqual({ success: true });
    expect(ok(await cli(["envs", "delete", "lqa", "--yes", "--json"], { env: localEnv }))).toEqual({ success: true });
  });

  it("refuses to delete one holding resources unless --force", async () => {
    ok(await cli(["envs", "create", "--name", "held-local", "--json"], { env: localEnv }));
    ok(await cli(["--env", "held-local", "sources", "create", "--name", "kept", "--json"], { env: localEnv }));
    const refused = await cli(["envs", "delete", "held-local", "--yes", "--json"], { env: localEnv });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.errorJson().error.code).toBe("conflict");
    expect(refused.errorJson().error.message).toContain("1 sources");
    expect(ok(await cli(["envs", "delete", "held-local", "--force", "--yes", "--json"], { env: localEnv }))).toEqual({ success: true });
  });
});

describe("--env", () => {
  it("in local mode picks the environment commands act in; an unknown one is refused", async () => {
    ok(await cli(["envs", "create", "--name", "Local Only", "--json"], { env: localEnv }));
    ok(await cli(["--env", "local-only", "sources", "create", "--name", "in local-only", "--json"], { env: localEnv }));
    const there = ok(await cli(["sources", "list", "--json"], { env: { ...localEnv, HOOKRELAY_ENV: "local-only" } })).sources.map((s: { name: string }) => s.name);
    expect(there).toEqual(["in local-only"]);
    const here = ok(await cli(["sources", "list", "--json"], { env: localEnv })).sources.map((s: { name: string }) => s.name);
    expect(here).not.toContain("in local-only");
    const unknown = await cli(["--env", "nope", "sources", "list", "--json"], { env: localEnv });
    expect(unknown.code).toBe(1);
    expect(unknown.errorJson().error.message).toContain('no environment "nope"');
  });

  it("with an API key, naming another environment is refused; naming its own works", async () => {
    const other = await cli(["--env", "local-only", "sources", "list", "--json"], { env: remoteEnv });
    expect(other.code).toBe(4); // 403: the exit code of a refused credential (cli/errors.ts)
    expect(other.errorJson().error.message).toContain("This API key belongs to another environment");
    ok(await cli(["--env", "production", "sources", "list", "--json"], { env: remoteEnv }));
  });

  it("with a session: sent as X-Hookrelay-Env, and saved in the profile by login --env", async () => {
    const env = cliEnv({ HOOKRELAY_EMAIL: ADMIN.email, HOOKRELAY_PASSWORD: ADMIN.password });
    ok(await cli(["login", "--url", server.url, "--env", "local-only", "--json"], { env }));
    const file = join(env.XDG_CONFIG_HOME!, "hookrelay", "profiles.json");
    expect(JSON.parse(readFileSync(file, "utf8")).profiles.default.env).toBe("local-only");
    const me = ok(await cli(["whoami", "--json"], { env }));
    expect(me.environment.slug).toBe("local-only");
    expect(ok(await cli(["sources", "list", "--json"], { env })).sources.map((s: { name: string }) => s.name)).toEqual(["in local-only"]);
    // --env overrides the profile's for one command.
    expect(ok(await cli(["--env", "production", "whoami", "--json"], { env })).environment.slug).toBe("production");
    const badLogin = await cli(["login", "--url", server.url, "--env", "nope", "--json"], { env });
    expect(badLogin.code).toBe(1);
    // The server's user keeps acting where the key is: reset the last used environment.
    await call(server, "GET", "/v1/auth/me", { headers: { ...(await server.session()), "x-hookrelay-env": "production" } });
  });
});

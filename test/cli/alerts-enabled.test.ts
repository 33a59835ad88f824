import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server";
import { cli, cliEnv, type CliResult } from "./helpers";

/**
 * `hookrelay alerts update --disabled` / `--enabled` switch a rule off and
 * on, in remote and local mode, as `create --disabled` creates it off.
 */
let server: TestServer;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  const base = cliEnv();
  remoteEnv = { ...base, HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: await server.apiKey() };
  localEnv = { ...base, ...server.storeEnv, HOOKRELAY_BASE_URL: server.deps.settings.baseUrl };
});
afterAll(async () => {
  await server.close();
});

const remote = (args: string[]) => cli([...args, "--json"], { env: remoteEnv });
const local = (args: string[]) => cli([...args, "--json"], { env: localEnv });

function ok(r: CliResult) {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.json();
}

describe("alerts update --disabled / --enabled", () => {
  it("switches a rule off and on again in either mode; both at once is a usage error", async () => {
    const rule = ok(await remote(["alerts", "create", "--name", "DLQ watch", "--type", "dlq"])).alert_rule;
    expect(rule.enabled).toBe(1);

    const off = ok(await remote(["alerts", "update", rule.id, "--disabled"])).alert_rule;
    expect(off).toMatchObject({ id: rule.id, enabled: 0, name: "DLQ watch" });
    expect(ok(await local(["alerts", "get", rule.id])).alert_rule.enabled).toBe(0);

    const on = ok(await local(["alerts", "update", rule.id, "--enabled"])).alert_rule;
    expect(on.enabled).toBe(1);
    expect(ok(await remote(["alerts", "get", rule.id])).alert_rule.enabled).toBe(1);

    // Off again from local mode, with another field beside it.
    const renamed = ok(await local(["alerts", "update", rule.id, "--disabled", "--cooldown-minutes", "5"])).alert_rule;
    expect(renamed).toMatchObject({ enabled: 0, cooldown_minutes: 5 });

    for (const run of [remote, local]) {
      const both = await run(["alerts", "update", rule.id, "--enabled", "--disabled"]);
      expect(both.code, both.stderr).toBe(2);
      expect(both.stdout).toBe("");
      expect(both.stderr).toMatch(/--enabled and --disabled/);
    }
    expect(ok(await remote(["alerts", "get", rule.id])).alert_rule.enabled).toBe(0);
  });
});

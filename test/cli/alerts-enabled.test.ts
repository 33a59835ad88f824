import { describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { cli, modeEnvs, ok } from "./helpers";

/**
 * `hookrelay alerts update --disabled` / `--enabled` switch a rule off and
 * on, in remote and local mode, as `create --disabled` creates it off.
 */
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;

useServer({}, (s) => ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key)));

const remote = (args: string[]) => cli([...args, "--json"], { env: remoteEnv });
const local = (args: string[]) => cli([...args, "--json"], { env: localEnv });

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

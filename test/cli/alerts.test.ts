import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { pipeline, sendEvent, waitFor, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { tempDir, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { cli, modeEnvs, ok, refused, same, type CliResult } from "./helpers";

/**
 * `hookrelay issues`, `alerts` and `channels` (docs/cli.md, "Issues, alert rules and channels") against one
 * running server whose destination's receiver is down: remote mode (URL +
 * API key) and local mode (its data dir) answer the same JSON, --json prints
 * the API's answer exactly, bad flags exit 2, API refusals exit 1 with the
 * API's error body, a failed channel test exits 1 with the error.
 */
let server: TestServer;
let key: string;
let sink: Sink;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;
let p: Pipeline;
const files = tempDir("hookrelay-cli-alerts-");
const HOOK_SECRET = "cli-hook-secret";
const ids = { issue: "", hook: "", broken: "", slack: "", rule: "" };

useServer({ sink: true }, (s) => {
  ({ server, key, sink } = s);
  ({ remoteEnv, localEnv } = modeEnvs(server, key));
});
beforeAll(async () => {
  sink.respond = (req) => {
    if (req.path.startsWith("/orders")) return new Response("orders down", { status: 503 });
    if (req.path.startsWith("/broken")) return new Response("no_service", { status: 500 });
    return new Response("ok");
  };
  p = await pipeline(server, key, { url: `${sink.url}/orders`, source: { name: "Shop", slug: "shop" }, destination: { name: "Orders API", max_retries: 0 } });
  const eventId = await sendEvent(server, p.sourceId, { order: 1 });
  await waitForEventStatus(server, key, eventId, ["failed"]);
});

const remote = (args: string[], stdin?: string) => cli([...args, "--json"], { env: remoteEnv, stdin });
const local = (args: string[], stdin?: string) => cli([...args, "--json"], { env: localEnv, stdin });
const both = (args: string[]) => Promise.all([remote(args), local(args)]);

/** A usage error: exit 2, nothing on stdout, in both modes. */
function usage([r, l]: CliResult[]) {
  for (const res of [r!, l!]) {
    expect(res.code, res.stderr).toBe(2);
    expect(res.stdout).toBe("");
  }
  return r!.stderr;
}

function file(name: string, value: unknown) {
  const path = join(files, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe("issues list and get", () => {
  it("lists the issue the failing delivery opened, the same in both modes, filtered by status and destination", async () => {
    const list = same(await both(["issues", "list"]));
    expect(list.pagination).toMatchObject({ total: 1 });
    expect(list.issues[0]).toMatchObject({ destination_id: p.destinationId, destination_name: "Orders API", title: "HTTP 503 responses", status: "open", occurrence_count: 1 });
    ids.issue = list.issues[0].id;
    expect(same(await both(["issues", "list", "--status", "open", "--destination-id", p.destinationId])).issues.map((i: { id: string }) => i.id)).toEqual([ids.issue]);
    expect(same(await both(["issues", "list", "--status", "resolved"])).issues).toEqual([]);
    expect(same(await both(["issues", "list", "--limit", "1", "--offset", "1"])).issues).toEqual([]);
    usage(await both(["issues", "list", "--status", "sleeping"]));
  });

  it("gets an issue with its last failed attempt's response; an unknown id is not_found", async () => {
    const got = same(await both(["issues", "get", ids.issue]));
    expect(got.issue.id).toBe(ids.issue);
    expect(got.last_attempt).toMatchObject({ id: got.issue.last_attempt_id, response_status: 503, response_body: "orders down" });
    refused(await both(["issues", "get", "0123456789abcdef0123456789abcdef"]), "not_found");
  });

  it("prints rows and records without --json", async () => {
    const list = await cli(["issues", "list"], { env: remoteEnv });
    expect(list.code).toBe(0);
    expect(list.stdout.split("\t").slice(0, 4)).toEqual([ids.issue, "HTTP 503 responses", "Orders API", "open"]);
    const got = await cli(["issues", "get", ids.issue], { env: localEnv });
    expect(got.code).toBe(0);
    expect(got.stdout).toContain("title\tHTTP 503 responses\n");
    expect(got.stdout).toContain("last_error\tdestination answered HTTP 503\n");
  });
});

describe("issues update", () => {
  it("acknowledges, snoozes for a span or until a time, unsnoozes and resolves, in either mode", async () => {
    expect(ok(await remote(["issues", "update", ids.issue, "--status", "acknowledged"])).issue.status).toBe("acknowledged");

    const before = Date.now();
    const snoozed = ok(await local(["issues", "update", ids.issue, "--snooze", "24h"])).issue;
    const until = Date.parse(snoozed.snoozed_until);
    expect(until - before).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(until - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    expect(snoozed.status).toBe("acknowledged");

    expect(ok(await remote(["issues", "update", ids.issue, "--snooze-until", "2030-01-01T09:00:00Z"])).issue.snoozed_until).toBe("2030-01-01T09:00:00.000Z");
    const done = ok(await local(["issues", "update", ids.issue, "--unsnooze", "--status", "resolved"])).issue;
    expect(done).toMatchObject({ status: "resolved", snoozed_until: null });
    expect(done.resolved_at).not.toBeNull();
    expect(same(await both(["issues", "get", ids.issue])).issue).toEqual(done);
    ok(await remote(["issues", "update", ids.issue, "--status", "open"]));
  });

  it("refuses bad flags with exit 2 and a bad date with the API's 400", async () => {
    usage(await both(["issues", "update", ids.issue, "--status", "fixed"]));
    usage(await both(["issues", "update", ids.issue, "--snooze", "soon"]));
    usage(await both(["issues", "update", ids.issue, "--snooze", "1h", "--unsnooze"]));
    expect(usage(await both(["issues", "update", ids.issue]))).toMatch(/nothing to update/);
    const bad = refused(await both(["issues", "update", ids.issue, "--snooze-until", "next tuesday"]), "validation_error");
    expect(bad.details[0]).toMatchObject({ field: "body.snoozed_until" });
    refused(await both(["issues", "update", "0123456789abcdef0123456789abcdef", "--status", "ignored"]), "not_found");
  });
});

describe("channels", () => {
  it("creates channels per type with --config inline or @file, secrets masked, read back the same in both modes", async () => {
    const hook = ok(await remote(["channels", "create", "--name", "Ops hook", "--type", "webhook", "--config", JSON.stringify({ url: `${sink.url}/hook`, secret: HOOK_SECRET })]));
    expect(hook).toMatchObject({ name: "Ops hook", type: "webhook", config: { url: `${sink.url}/hook`, secret: "********" } });
    expect(hook.id).toMatch(/^nc_[0-9a-f]{32}$/);
    ids.hook = hook.id;
    const slack = ok(await local(["channels", "create", "--name", "Ops Slack", "--channel-type", "slack", "--config", `@${file("slack.json", { webhook_url: `${sink.url}/slack/T0/B0/token` })}`]));
    expect(slack.config).toEqual({ webhook_url: `${sink.url}/slack/T0/B0/********` });
    ids.slack = slack.id;
    ids.broken = ok(await remote(["channels", "create", "--name", "Broken", "--type", "webhook", "--config", JSON.stringify({ url: `${sink.url}/broken` })])).id;

    const got = same(await both(["channels", "get", ids.hook]));
    expect(got).toMatchObject({ id: ids.hook, name: "Ops hook", type: "webhook", config: hook.config });
    const list = same(await both(["channels", "list"]));
    expect(list.channels.map((c: { name: string }) => c.name)).toEqual(["Broken", "Ops Slack", "Ops hook"]);
  });

  it("refuses a bad config naming the field, and an unknown type with exit 2", async () => {
    const bad = refused(await both(["channels", "create", "--name", "x", "--type", "webhook", "--config", '{"url": "ftp://example.com"}']), "validation_error");
    expect(bad.details[0].field).toBe("body.config.url");
    usage(await both(["channels", "create", "--name", "x", "--type", "pager", "--config", "{}"]));
    usage(await both(["channels", "create", "--name", "x", "--type", "webhook", "--config", "{not json"]));
  });

  it("renames a channel keeping its secret", async () => {
    const updated = ok(await local(["channels", "update", ids.hook, "--name", "Ops webhook"]));
    expect(Object.keys(updated).sort()).toEqual(["id", "name", "type", "updated_at"]);
    expect(updated).toMatchObject({ id: ids.hook, name: "Ops webhook", type: "webhook" });
    expect(same(await both(["channels", "get", ids.hook])).config.secret).toBe("********");
  });

  it("sends a signed test; a failing channel exits 1 with its error", async () => {
    for (const run of [remote, local]) {
      const before = sink.requests.filter((r) => r.path === "/hook").length;
      expect(ok(await run(["channels", "test", ids.hook]))).toEqual({ success: true, error: null });
      const req = (await waitFor(async () => sink.requests.filter((r) => r.path === "/hook")[before]))!;
      expect(req.headers["x-hookrelay-signature"]).toBe("sha256=" + createHmac("sha256", HOOK_SECRET).update(req.body).digest("hex"));
      expect(JSON.parse(req.body)).toMatchObject({ type: "alert.test", link: `${server.deps.settings.baseUrl}/notification-channels/${ids.hook}` });
    }

    for (const run of [remote, local]) {
      const failed = await run(["channels", "test", ids.broken]);
      expect(failed.code).toBe(1);
      expect(failed.json()).toEqual({ success: false, error: "the webhook answered HTTP 500: no_service" });
      expect(failed.errorJson().error).toMatchObject({ code: "test_failed" });
    }
    const human = await cli(["channels", "test", ids.broken], { env: remoteEnv });
    expect(human.code).toBe(1);
    expect(human.stderr).toBe("error (test_failed): the test notification failed: the webhook answered HTTP 500: no_service\n");
    const good = await cli(["channels", "test", ids.hook], { env: localEnv });
    expect(good.code).toBe(0);
    expect(good.stdout).toBe(`✓ Test notification sent to ${ids.hook}\n`);
  });
});

describe("alerts create, get, list", () => {
  it("creates a failure_rate rule from per-field flags, a source slug, a destination and channels; it fires on the failed delivery", async () => {
    const rule = ok(
      await remote([
        "alerts",
        "create",
        "--name",
        "Orders failing",
        "--type",
        "failure_rate",
        "--threshold-percent",
        "50",
        "--min-attempts",
        "1",
        "--source-id",
        "shop",
        "--destination-id",
        p.destinationId,
        "--channel-ids",
        `${ids.hook},${ids.slack}`,
        "--cooldown-minutes",
        "60",
      ]),
    ).alert_rule;
    ids.rule = rule.id;
    expect(rule).toMatchObject({ name: "Orders failing", rule_type: "failure_rate", enabled: 1, source_id: p.sourceId, destination_id: p.destinationId, cooldown_minutes: 60, channel_ids: JSON.stringify([ids.hook, ids.slack]) });
    expect(JSON.parse(rule.rule_config)).toEqual({ threshold_percent: 50, window_minutes: 5, min_attempts: 1 });

    // Saving asked the server for an evaluation: the failed delivery is in the window.
    await waitFor(async () => ok(await remote(["alerts", "history", ids.rule])).history.length > 0, { timeoutMs: 10_000, what: "the rule to fire" });
    const history = same(await both(["alerts", "history", ids.rule]));
    expect(history.pagination).toMatchObject({ total: 1 });
    expect(history.history[0].trigger_reason).toBe("100% of deliveries to Orders API from Shop failed in the last 5 minutes (1 of 1; threshold 50%)");
    const outcomes = JSON.parse(history.history[0].channels_notified);
    expect(outcomes.map((o: { channel_id: string; success: boolean }) => [o.channel_id, o.success])).toEqual([
      [ids.hook, true],
      [ids.slack, true],
    ]);
    const got = same(await both(["alerts", "get", ids.rule]));
    expect(got.alert_rule).toMatchObject({ id: ids.rule, trigger_count: 1 });
    expect(got.history).toEqual(history.history);
  });

  it("creates from --config, and switched off with --disabled, in local mode", async () => {
    const latency = ok(await local(["alerts", "create", "--name", "Slow", "--type", "latency", "--config", '{"threshold_ms": 2000}', "--percentile", "99"])).alert_rule;
    expect(JSON.parse(latency.rule_config)).toEqual({ threshold_ms: 2000, percentile: 99, window_minutes: 5 });
    const quiet = ok(await local(["alerts", "create", "--name", "New issues", "--type", "issue_opened", "--channel-ids", ids.hook, "--cooldown-minutes", "0", "--disabled"])).alert_rule;
    expect(quiet).toMatchObject({ enabled: 0, rule_config: "{}", cooldown_minutes: 0 });

    const all = same(await both(["alerts", "list"]));
    expect(all.alert_rules.map((r: { name: string }) => r.name)).toEqual(["New issues", "Slow", "Orders failing"]);
    expect(same(await both(["alerts", "list", "--enabled", "0"])).alert_rules.map((r: { id: string }) => r.id)).toEqual([quiet.id]);
    expect(same(await both(["alerts", "list", "--rule-type", "latency"])).alert_rules.map((r: { id: string }) => r.id)).toEqual([latency.id]);
  });

  it("refuses a bad rule_config naming the field, unknown channels and scopes; bad flags exit 2", async () => {
    const over = refused(await both(["alerts", "create", "--name", "x", "--type", "failure_rate", "--threshold-percent", "150"]), "validation_error");
    expect(over.details[0].field).toBe("body.rule_config.threshold_percent");
    const missing = refused(await both(["alerts", "create", "--name", "x", "--type", "volume_drop"]), "validation_error");
    expect(missing.details[0].field).toBe("body.rule_config.min_events");
    const channel = refused(await both(["alerts", "create", "--name", "x", "--type", "dlq", "--channel-ids", "nc_0123456789abcdef0123456789abcdef"]), "validation_error");
    expect(channel.details[0].field).toBe("body.channel_ids.0");
    refused(await both(["alerts", "create", "--name", "x", "--type", "dlq", "--destination-id", "dst_0123456789abcdef0123456789abcdef"]), "not_found");
    refused(await both(["alerts", "create", "--name", "x", "--type", "dlq", "--source-id", "no-such-source"]), "not_found");
    usage(await both(["alerts", "create", "--name", "x", "--type", "outage"]));
    usage(await both(["alerts", "create", "--name", "x", "--type", "failure_rate", "--threshold-percent", "lots"]));
    usage(await both(["alerts", "create", "--type", "dlq"]));
  });

  it("shows a rule and its history as records and rows without --json", async () => {
    const got = await cli(["alerts", "get", ids.rule], { env: remoteEnv });
    expect(got.code).toBe(0);
    expect(got.stdout).toContain("name\tOrders failing\n");
    const history = await cli(["alerts", "history", ids.rule], { env: localEnv });
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/\t100% of deliveries to Orders API from Shop failed in the last 5 minutes \(1 of 1; threshold 50%\)\tOps webhook ok; Ops Slack ok\n$/);
  });
});

describe("alerts update and delete; channels delete", () => {
  it("changes one config field keeping the stored others, switches the rule off, refuses nothing to do", async () => {
    const updated = ok(await local(["alerts", "update", ids.rule, "--threshold-percent", "30", "--no-enabled"])).alert_rule;
    expect(JSON.parse(updated.rule_config)).toEqual({ threshold_percent: 30, window_minutes: 5, min_attempts: 1 });
    expect(updated.enabled).toBe(0);
    const again = ok(await remote(["alerts", "update", ids.rule, "--enabled", "--window-minutes", "10"])).alert_rule;
    expect(JSON.parse(again.rule_config)).toEqual({ threshold_percent: 30, window_minutes: 10, min_attempts: 1 });
    expect(same(await both(["alerts", "get", ids.rule])).alert_rule).toEqual(again);
    expect(usage(await both(["alerts", "update", ids.rule]))).toMatch(/nothing to update/);
    refused(await both(["alerts", "update", "0123456789abcdef0123456789abcdef", "--name", "x"]), "not_found");
  });

  it("refuses to delete a channel an alert rule notifies, naming the rules", async () => {
    const [r, l] = await both(["channels", "delete", ids.hook, "--yes"]);
    const error = refused([r!, l!], "conflict");
    expect(error.details.map((d: { name: string }) => d.name).sort()).toEqual(["New issues", "Orders failing"]);
    const human = await cli(["channels", "delete", ids.hook, "--yes"], { env: remoteEnv });
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^error \(conflict\): the channel is still notified by the alert rules "(Orders failing|New issues)" \(\w+\), "(Orders failing|New issues)" \(\w+\): remove it there first/);
  });

  it("deletes rules and channels in either mode", async () => {
    expect(ok(await remote(["alerts", "delete", ids.rule, "--yes"]))).toEqual({ success: true });
    refused(await both(["alerts", "get", ids.rule]), "not_found");
    expect(ok(await local(["channels", "delete", ids.broken, "--yes"]))).toEqual({ deleted: true });
    expect(ok(await remote(["channels", "delete", ids.slack, "--yes"]))).toEqual({ deleted: true });
    refused(await both(["channels", "get", ids.slack]), "not_found");
  });

  it("exits 4 on a bad API key", async () => {
    const r = await cli(["issues", "list", "--json"], { env: { ...remoteEnv, HOOKRELAY_API_KEY: "hr_nope" } });
    expect(r.code).toBe(4);
    expect(r.errorJson().error.code).toBe("unauthorized");
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import { jobs } from "../../src/db/schema";
import { useServer } from "../helpers/fixture";
import type { TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { cli, modeEnvs, ok } from "./helpers";

/**
 * events retry, attempts list [--dlq], attempts redrive, replay start --wait /
 * status and jobs get, remote and local, against deliveries to a real sink.
 * Jobs are started remotely (the server's workers are woken at once); local
 * mode reads them back and starts one to show the same answer.
 */
let server: TestServer;
let sink: Sink;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;

useServer({ sink: true }, (s) => {
  ({ server, sink } = s);
  ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key));
});
beforeAll(() => {
  sink.respond = (req) => new Response(req.path.startsWith("/broken") ? "down" : "ok", { status: req.path.startsWith("/broken") ? 500 : 200 });
});

const remote = (args: string[]) => cli([...args, "--json"], { env: remoteEnv });
const local = (args: string[]) => cli([...args, "--json"], { env: localEnv });
async function until<T>(fn: () => Promise<T>, good: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (good(v) || Date.now() > end) return v;
    await Bun.sleep(100);
  }
}
const ingest = async (url: string, body: unknown) => ((await (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json()) as { event_id: string }).event_id;

describe("retry, attempts, replay, jobs", () => {
  let source: any;
  let good: any;
  let broken: any;
  let eventId: string;
  const from = new Date(Date.now() - 60_000).toISOString();

  it("delivers, retries one event, lists attempts the same in both modes", async () => {
    source = ok(await remote(["sources", "create", "--name", "orders"])).source;
    [good, broken] = await Promise.all([
      remote(["destinations", "create", "--name", "good", "--url", `${sink.url}/ok`]).then((r) => ok(r).destination),
      remote(["destinations", "create", "--name", "broken", "--url", `${sink.url}/broken`, "--max-retries", "0"]).then((r) => ok(r).destination),
    ]);
    await Promise.all([
      remote(["connections", "create", "--name", "to-good", "--source-id", source.id, "--destination-id", good.id]),
      remote(["connections", "create", "--name", "to-broken", "--source-id", source.id, "--destination-id", broken.id]),
    ]);
    eventId = await ingest(source.ingest_url, { type: "order.created" });
    const settled = await until(
      () => remote(["attempts", "list", "--event-id", eventId]).then(ok),
      (r: any) => r.delivery_attempts.length === 2 && r.delivery_attempts.every((a: any) => a.status === "success" || a.status === "failed"),
    );
    expect(settled.delivery_attempts.map((a: any) => a.status).sort()).toEqual(["failed", "success"]);

    const [dlqRemote, dlqLocal] = await Promise.all([remote(["attempts", "list", "--dlq"]), local(["attempts", "list", "--dlq"])]);
    expect(ok(dlqRemote)).toEqual(ok(dlqLocal));
    expect(ok(dlqRemote).delivery_attempts).toHaveLength(1);
    expect(ok(dlqRemote).delivery_attempts[0]).toMatchObject({ destination_id: broken.id, is_dlq: 1 });

    const retried = ok(await local(["events", "retry", eventId]));
    expect(retried.retried.map((r: any) => r.destination_id).sort()).toEqual([good.id, broken.id].sort());
    expect(retried.retried.every((r: any) => r.status === "queued")).toBe(true);
  });

  it("redrives the DLQ and replays a window with --wait; status and jobs get agree in both modes", async () => {
    // The retry above sent the broken delivery again; it fails back into the DLQ.
    await until(
      () => remote(["attempts", "list", "--dlq", "--destination-id", broken.id]).then(ok),
      (r: any) => r.delivery_attempts.length === 1,
    );
    const redrive = ok(await remote(["attempts", "redrive", "--destination-id", broken.id, "--wait"]));
    expect(redrive).toMatchObject({ kind: "redrive", status: "completed", total: 1, succeeded: 1 });

    const replay = ok(await remote(["replay", "start", "--destination-id", good.id, "--from", from, "--to", new Date(Date.now() + 1000).toISOString(), "--wait", "--timeout", "20"]));
    expect(replay).toMatchObject({ kind: "replay", status: "completed", total: 1, processed: 1 });
    const [statusRemote, statusLocal, jobLocal] = await Promise.all([remote(["replay", "status", replay.job_id]), local(["replay", "status", replay.job_id]), local(["jobs", "get", replay.job_id])]);
    expect(ok(statusRemote)).toEqual(ok(statusLocal));
    expect(ok(jobLocal)).toEqual(ok(statusRemote));

    const started = ok(await local(["replay", "start", "--destination-id", good.id, "--from", from, "--to", new Date().toISOString()]));
    expect(started).toEqual({ job_id: expect.stringMatching(/^[0-9a-f]{32}$/), status: "running", total: 1 });
  });

  it("replay start --connection-id: the connection's destination, source and filter; remote and local agree", async () => {
    const mine = ok(await remote(["sources", "create", "--name", "replay-through"])).source;
    const other = ok(await remote(["sources", "create", "--name", "not-this-one"])).source;
    const to = ok(await remote(["destinations", "create", "--name", "replay-target", "--url", `${sink.url}/via-connection`])).destination;
    const conn = ok(
      await remote(["connections", "create", "--name", "only-b", "--source-id", mine.id, "--destination-id", to.id, "--no-enabled", "--filter-rules", '[{"field":"body.kind","operator":"eq","value":"b"}]']),
    ).connection;
    const since = new Date(Date.now() - 1000).toISOString();
    for (const [url, kind] of [[mine.ingest_url, "a"], [mine.ingest_url, "b"], [other.ingest_url, "b"]] as const) await ingest(url, { kind });
    const until = new Date(Date.now() + 1000).toISOString();
    const r = ok(await remote(["replay", "start", "--connection-id", conn.id, "--from", since, "--to", until, "--wait", "--timeout", "20"]));
    expect(r).toMatchObject({ kind: "replay", status: "completed", total: 1, succeeded: 1, skipped: 1 });
    const got = sink.requests.filter((q) => q.path === "/via-connection").map((q) => JSON.parse(q.body));
    expect(got).toEqual([{ kind: "b" }]);
    const started = ok(await local(["replay", "start", "--connection-id", conn.id, "--from", since, "--to", until]));
    expect(started).toEqual({ job_id: expect.stringMatching(/^[0-9a-f]{32}$/), status: "running", total: 2 });
  });

  it("bulk retry needs filters or --all; an unknown job exits 1", async () => {
    const refused = await remote(["events", "retry"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--all");
    const bulk = ok(await remote(["events", "retry", "--source-id", source.id, "--status", "delivered,failed,pending", "--wait"]));
    expect(bulk).toMatchObject({ kind: "bulk_retry", status: "completed", total: 1 });
    const missing = await local(["replay", "status", "0".repeat(32)]);
    expect(missing.code).toBe(1);
    expect(missing.errorJson().error.code).toBe("not_found");
  });
});

describe("exit codes: a waited-for job with failures, or work that did nothing, exits 1 with the counts", () => {
  let source: any;
  let broken: any;
  let eventId: string;
  const from = new Date(Date.now() - 60_000).toISOString();

  it("replay start --wait whose deliveries failed: the job on stdout, exit 1, the counts on stderr; jobs get --wait agrees", async () => {
    source = ok(await remote(["sources", "create", "--name", "exit-codes"])).source;
    broken = ok(await remote(["destinations", "create", "--name", "always-500", "--url", `${sink.url}/broken/exit`, "--max-retries", "0"])).destination;
    eventId = await ingest(source.ingest_url, { type: "x" });
    const r = await remote(["replay", "start", "--destination-id", broken.id, "--source-id", source.id, "--from", from, "--to", new Date(Date.now() + 1000).toISOString(), "--wait", "--timeout", "20"]);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ kind: "replay", status: "completed", total: 1, succeeded: 0, failed: 1 });
    expect(r.errorJson().error).toMatchObject({ code: "job_failed", message: expect.stringContaining("failed 1"), details: { total: 1, failed: 1 } });

    const again = await cli(["jobs", "get", r.json().job_id, "--wait"], { env: localEnv });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/error \(job_failed\): replay job [0-9a-f]{32} had failures: total 1, succeeded 0, failed 1/);
    expect((await local(["jobs", "get", r.json().job_id])).code).toBe(0);
  });

  it("replay start over a window without events: exit 1, nothing to do", async () => {
    const r = await remote(["replay", "start", "--destination-id", broken.id, "--from", "2001-01-01T00:00:00Z", "--to", "2001-01-02T00:00:00Z"]);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ total: 0 });
    expect(r.errorJson().error).toMatchObject({ code: "nothing_done", message: expect.stringContaining("no event to replay") });
  });

  it("events retry (bulk) that matches nothing: no job, says nothing to retry, exits 1, with and without --wait", async () => {
    const jobsBefore = (await server.deps.db.select().from(jobs)).length;
    const [started, waited, human] = await Promise.all([
      remote(["events", "retry", "--source-id", source.id, "--status", "held"]),
      local(["events", "retry", "--source-id", source.id, "--status", "held", "--wait"]),
      cli(["events", "retry", "--source-id", source.id, "--status", "held"], { env: remoteEnv }),
    ]);
    expect(started.code).toBe(1);
    expect(started.json()).toEqual({ job_id: null, total: 0, skipped: 0 });
    expect(started.errorJson().error).toMatchObject({ code: "nothing_done", message: "nothing to retry: no event to retry matched the filters" });
    expect(waited.code).toBe(1);
    expect(waited.json()).toEqual({ job_id: null, total: 0, skipped: 0 });
    expect(waited.errorJson().error).toMatchObject({ code: "nothing_done", message: expect.stringContaining("nothing to retry") });
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/Nothing to retry: no event matched the filters/);
    expect(human.stderr).toMatch(/nothing to retry/);
    // Nothing to do made no job, neither through the API nor in local mode.
    expect((await server.deps.db.select().from(jobs)).length).toBe(jobsBefore);
  });

  it("events retry <id> that queues nothing (no connection) exits 1 and says why", async () => {
    const r = await cli(["events", "retry", eventId], { env: remoteEnv });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Queued 0 deliveries");
    expect(r.stderr).toContain(`error (nothing_done): nothing queued for ${eventId}: its source has no connection to deliver through`);
  });
});

describe("events retry of a rejected event", () => {
  it("answers 409 with the server's message and exits 1; --force sends {force: true} and queues it", async () => {

    const github = ok(await remote(["sources", "create", "--name", "gh-forged", "--template", "github", "--verification-secret", "gh-secret"])).source;
    const target = ok(await remote(["destinations", "create", "--name", "forged-target", "--url", `${sink.url}/ok/forged`])).destination;
    ok(await remote(["connections", "create", "--name", "forged", "--source-id", github.id, "--destination-id", target.id]));
    const res = await fetch(github.ingest_url, { method: "POST", headers: { "x-hub-signature-256": "sha256=" + "0".repeat(64) }, body: "{}" });
    const rejected = ((await res.json()) as any).error.details.event_id as string;

    const refused = await cli(["events", "retry", rejected], { env: remoteEnv });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error \(conflict\): /);
    expect(refused.stderr).toContain("--force");
    const refusedLocal = await local(["events", "retry", rejected]);
    expect(refusedLocal.code).toBe(1);
    expect(refusedLocal.errorJson().error.code).toBe("conflict");

    const forced = ok(await remote(["events", "retry", rejected, "--force"]));
    expect(forced.retried).toMatchObject([{ destination_id: target.id, status: "queued" }]);
  });
});

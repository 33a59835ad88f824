/**
 * Issues over real deliveries: a local sink answers as each test tells it,
 * the running worker records the outcomes, and issues follow in the same
 * transaction (docs/decisions.md D8).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { listAttempts, pipeline, sendEvent, waitFor, waitForEventStatus, type Pipeline } from "../helpers/delivery";
import { otherOrgKey } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string, sink: Sink;
/** Per path: the status the sink answers with (200 when unset). */
const answers = new Map<string, number>();

useServer({ sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  sink.respond = async (req) => {
    const path = req.path.split("?")[0]!;
    if (path === "/hang") {
      await Bun.sleep(1000);
      return new Response("late");
    }
    return new Response("answer", { status: answers.get(path) ?? 200 });
  };
});

const get = (path: string, k = key) => call(server, "GET", path, { key: k });
const patch = (path: string, body: unknown, k = key) => call(server, "PATCH", path, { key: k, body });

async function issuesOf(destinationId: string) {
  const res = await get(`/v1/issues?destination_id=${destinationId}`);
  expect(res.status).toBe(200);
  return res.body.issues as any[];
}

/** Sends an event and waits until its one try is recorded (max_retries 0: success, or failure into the DLQ). */
async function deliverOnce(p: Pipeline, body: unknown = { n: 1 }) {
  const eventId = await sendEvent(server, p.sourceId, body);
  await waitForEventStatus(server, key, eventId, ["delivered", "failed"]);
  return eventId;
}

describe("issues open, count, resolve and reopen with delivery outcomes", () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await pipeline(server, key, { url: `${sink.url}/orders`, destination: { name: "Orders API", max_retries: 0 } });
  });

  it("opens an issue at the first failed attempt of a class, keeping the last attempt's details", async () => {
    answers.set("/orders", 503);
    const eventId = await deliverOnce(p);
    const [issue] = await issuesOf(p.destinationId);
    const [attempt] = await listAttempts(server, key, { event_id: eventId });
    expect(issue).toMatchObject({
      destination_id: p.destinationId,
      destination_name: "Orders API",
      fingerprint: `${p.destinationId}:http_503`,
      title: "HTTP 503 responses",
      status: "open",
      snoozed_until: null,
      occurrence_count: 1,
      resolved_at: null,
      last_attempt_id: attempt.id,
      last_event_id: eventId,
      last_error: "destination answered HTTP 503",
      last_status_code: 503,
    });
    expect(issue.id).toMatch(/^[0-9a-f]{32}$/);
    expect(issue.first_seen_at).toBe(issue.last_seen_at);
    expect(issue.created_at).toBe(issue.first_seen_at);
    expect(Object.keys(issue).sort()).toEqual(
      [
        "id", "org_id", "env_id", "destination_id", "fingerprint", "title", "status", "snoozed_until", "occurrence_count", "first_seen_at", "last_seen_at",
        "resolved_at", "last_attempt_id", "last_event_id", "last_error", "last_status_code", "created_at", "updated_at", "destination_name",
      ].sort(),
    );
  });

  it("counts further failures of the class on the same issue; another class opens its own", async () => {
    const second = await deliverOnce(p);
    const third = await deliverOnce(p);
    let list = await issuesOf(p.destinationId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ occurrence_count: 3, last_event_id: third, status: "open" });
    expect(list[0].last_event_id).not.toBe(second);
    expect(list[0].last_seen_at >= list[0].first_seen_at).toBe(true);

    answers.set("/orders", 500);
    await deliverOnce(p);
    list = await issuesOf(p.destinationId);
    expect(list.map((i) => [i.fingerprint.split(":")[1], i.occurrence_count])).toEqual([
      ["http_500", 1],
      ["http_503", 3],
    ]);
  });

  it("resolves every open issue of the destination at its next success", async () => {
    answers.set("/orders", 200);
    await deliverOnce(p);
    const list = await issuesOf(p.destinationId);
    expect(list.map((i) => i.status)).toEqual(["resolved", "resolved"]);
    for (const i of list) {
      expect(i.resolved_at).not.toBeNull();
      expect(i.resolved_at >= i.last_seen_at).toBe(true);
    }
  });

  it("reopens a resolved issue at its next failure and keeps counting", async () => {
    answers.set("/orders", 503);
    await deliverOnce(p);
    const list = await issuesOf(p.destinationId);
    const reopened = list.find((i) => i.fingerprint.endsWith(":http_503"));
    expect(reopened).toMatchObject({ status: "open", resolved_at: null, occurrence_count: 4 });
    expect(list.find((i) => i.fingerprint.endsWith(":http_500"))).toMatchObject({ status: "resolved", occurrence_count: 1 });
  });

  it("groups timeouts, connection errors and transform errors by class", async () => {
    const slow = await pipeline(server, key, { url: `${sink.url}/hang`, destination: { name: "Slow", max_retries: 0, timeout_ms: 100 } });
    await deliverOnce(slow);
    expect((await issuesOf(slow.destinationId)).map((i) => [i.title, i.fingerprint.split(":")[1], i.last_status_code])).toEqual([["Timeouts", "timeout", null]]);

    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const gone = await pipeline(server, key, { url: `http://127.0.0.1:${port}/x`, destination: { name: "Gone", max_retries: 0 } });
    await deliverOnce(gone);
    expect((await issuesOf(gone.destinationId)).map((i) => [i.title, i.fingerprint.split(":")[1]])).toEqual([["Connection errors", "connection_error"]]);

    const broken = await pipeline(server, key, {
      url: `${sink.url}/ok`,
      destination: { name: "Transformed", max_retries: 0 },
      connection: { transform_enabled: true, transform_expression: '$error("no")' },
    });
    await deliverOnce(broken);
    const [t] = await issuesOf(broken.destinationId);
    expect(t).toMatchObject({ title: "Transform errors", fingerprint: `${broken.destinationId}:transform_error`, last_status_code: null });
    expect(t.last_error).toContain("no");
  });
});

describe("GET /v1/issues", () => {
  it("filters by status and destination, newest first, with the events list's pagination", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/listing`, destination: { name: "Listing", max_retries: 0 } });
    for (const status of [500, 501, 502]) {
      answers.set("/listing", status);
      await deliverOnce(p);
    }
    const all = await issuesOf(p.destinationId);
    expect(all.map((i) => i.last_status_code)).toEqual([502, 501, 500]);

    const page1 = await get(`/v1/issues?destination_id=${p.destinationId}&limit=2`);
    expect(page1.body.pagination).toMatchObject({ total: 3, limit: 2, offset: 0, has_more: true, prev_cursor: null });
    const page2 = await get(`/v1/issues?destination_id=${p.destinationId}&limit=2&cursor=${page1.body.pagination.next_cursor}`);
    expect(page2.body.issues.map((i: any) => i.last_status_code)).toEqual([500]);
    expect(page2.body.pagination.has_more).toBe(false);
    const byOffset = await get(`/v1/issues?destination_id=${p.destinationId}&limit=1&offset=1`);
    expect(byOffset.body.issues.map((i: any) => i.last_status_code)).toEqual([501]);

    await patch(`/v1/issues/${all[1].id}`, { status: "ignored" });
    const ignored = await get(`/v1/issues?destination_id=${p.destinationId}&status=ignored`);
    expect(ignored.body.issues.map((i: any) => i.id)).toEqual([all[1].id]);
    const open = await get(`/v1/issues?status=open&destination_id=${p.destinationId.slice(4)}`);
    expect(open.body.issues.map((i: any) => i.last_status_code)).toEqual([502, 500]);
  });

  it("answers 400 for a bad status or limit, and an empty list for a destination id that cannot exist", async () => {
    expect((await get("/v1/issues?status=closed")).status).toBe(400);
    expect((await get("/v1/issues?limit=101")).status).toBe(400);
    expect((await get("/v1/issues?cursor=nope")).status).toBe(400);
    const none = await get("/v1/issues?destination_id=dst_nothing");
    expect(none.status).toBe(200);
    expect(none.body.issues).toEqual([]);
  });

  it("never shows another organization's issues", async () => {
    const other = await otherOrgKey(server);
    const res = await get("/v1/issues", other);
    expect(res.body.issues).toEqual([]);
    const [mine] = (await get("/v1/issues?limit=1")).body.issues;
    expect((await get(`/v1/issues/${mine.id}`, other)).status).toBe(404);
    expect((await patch(`/v1/issues/${mine.id}`, { status: "resolved" }, other)).status).toBe(404);
  });
});

describe("GET /v1/issues/{id}", () => {
  it("returns the issue with its last failed attempt, request and response included", async () => {
    const p = await pipeline(server, key, { url: `${sink.url}/detail`, destination: { name: "Detail", max_retries: 0 } });
    answers.set("/detail", 418);
    await deliverOnce(p);
    const [listed] = await issuesOf(p.destinationId);
    const res = await get(`/v1/issues/${listed.id}`);
    expect(res.status).toBe(200);
    expect(res.body.issue).toEqual(listed);
    expect(res.body.last_attempt).toMatchObject({ id: listed.last_attempt_id, response_status: 418, response_body: "answer", status: "failed", destination_name: "Detail" });
    expect((await get("/v1/issues/0123456789abcdef0123456789abcdef")).status).toBe(404);
    expect((await get("/v1/issues/not-an-id")).status).toBe(404);
  });
});

describe("PATCH /v1/issues/{id}", () => {
  let p: Pipeline;
  let id: string;
  beforeAll(async () => {
    p = await pipeline(server, key, { url: `${sink.url}/triage`, destination: { name: "Triage", max_retries: 0 } });
    answers.set("/triage", 502);
    await deliverOnce(p);
    id = (await issuesOf(p.destinationId))[0].id;
  });

  it("acknowledges, snoozes, resolves and reopens, returning {issue}", async () => {
    let res = await patch(`/v1/issues/${id}`, { status: "acknowledged" });
    expect(res.status).toBe(200);
    expect(res.body.issue).toMatchObject({ id, status: "acknowledged", resolved_at: null, destination_name: "Triage" });

    res = await patch(`/v1/issues/${id}`, { snoozed_until: "2030-01-02T03:04:05Z" });
    expect(res.body.issue).toMatchObject({ status: "acknowledged", snoozed_until: "2030-01-02T03:04:05.000Z" });
    expect((await get(`/v1/issues/${id}`)).body.issue.snoozed_until).toBe("2030-01-02T03:04:05.000Z");

    // An acknowledged issue keeps counting, and is still resolved by a success.
    await deliverOnce(p);
    expect((await get(`/v1/issues/${id}`)).body.issue).toMatchObject({ status: "acknowledged", occurrence_count: 2 });

    res = await patch(`/v1/issues/${id}`, { status: "resolved", snoozed_until: null });
    expect(res.body.issue.status).toBe("resolved");
    expect(res.body.issue.resolved_at).toBe(res.body.issue.updated_at);
    expect(res.body.issue.snoozed_until).toBeNull();

    res = await patch(`/v1/issues/${id}`, { status: "open" });
    expect(res.body.issue).toMatchObject({ status: "open", resolved_at: null });
  });

  it("leaves an ignored issue ignored when it fails again or the destination recovers", async () => {
    await patch(`/v1/issues/${id}`, { status: "ignored" });
    await deliverOnce(p);
    answers.set("/triage", 200);
    await deliverOnce(p);
    expect((await get(`/v1/issues/${id}`)).body.issue).toMatchObject({ status: "ignored", occurrence_count: 3 });
  });

  it("answers 404 for an unknown id and 400 for a bad status or date, never 5xx", async () => {
    expect((await patch("/v1/issues/0123456789abcdef0123456789abcdef", { status: "resolved" })).status).toBe(404);
    expect((await patch("/v1/issues/%00", { status: "resolved" })).status).toBe(404);
    for (const body of [{ status: "closed" }, { snoozed_until: "tomorrow" }, { snoozed_until: 5 }, { status: 1 }, "{", "[]"]) {
      const res = await patch(`/v1/issues/${id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
  });
});

describe("GET /v1/stats open_issues", () => {
  it("counts the environment's open issues for the dashboard card", async () => {
    const open = (await get("/v1/issues?status=open&limit=1")).body.pagination.total;
    expect(open).toBeGreaterThan(0);
    expect((await get("/v1/stats")).body.open_issues).toBe(open);
    expect((await get("/v1/stats", await otherOrgKey(server))).body.open_issues).toBe(0);
  });
});

describe("issue bookkeeping and retries", () => {
  it("counts every failed try of a chain, and the success that ends it resolves the issue", async () => {
    let calls = 0;
    const flaky = startSink();
    flaky.respond = () => new Response("x", { status: calls++ < 2 ? 500 : 200 });
    try {
      const p = await pipeline(server, key, { url: flaky.url, destination: { name: "Flaky", max_retries: 3, retry_strategy: "linear", retry_interval_seconds: 1 } });
      const eventId = await sendEvent(server, p.sourceId, { n: 1 });
      await waitForEventStatus(server, key, eventId, ["delivered"], 15_000);
      const [issue] = await waitFor(async () => {
        const list = await issuesOf(p.destinationId);
        return list[0]?.status === "resolved" ? list : null;
      });
      expect(issue).toMatchObject({ occurrence_count: 2, status: "resolved", last_status_code: 500 });
    } finally {
      flaky.close();
    }
  });
});

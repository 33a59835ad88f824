import { beforeAll, describe, expect, it } from "vitest";
import { inArray } from "drizzle-orm";
import { events } from "../../src/db/schema";
import { useServer } from "../helpers/fixture";
import { createSource, insertEvent, scopeOf } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";

/**
 * pagination.total of GET /v1/events with `after`/`before` comes from the
 * hourly rollup of events for the range's whole hours and from the rows of
 * the hours cut at its ends (src/domain/listTotals.ts): it must equal the
 * rows the list walks, wherever the ends fall, with or without `status`, and
 * after an event's status changes.
 */
let server: TestServer, key: string;
let sourceId: string;
const failed: string[] = [];
const T = (hhmm: string) => `2026-03-10T${hhmm}.000Z`;

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  const scope = await scopeOf(server, key);
  sourceId = (await createSource(server, key, "range-totals")).id;
  const times = ["05:10:00", "05:50:00", "06:00:00", "06:30:00", "07:59:59", "08:00:00", "08:20:00", "09:05:00"];
  for (const [i, t] of times.entries()) {
    const id = await insertEvent(server, scope, sourceId, { body: `{"i":${i}}`, receivedAt: T(t) });
    if (i % 3 === 0) failed.push(id);
  }
  // A status change after the insert: the rollup moves the event to its new status in its own hour.
  await server.deps.db.update(events).set({ status: "failed" }).where(inArray(events.id, failed));
});

/** The list's total, checked against the rows it walks (every set here fits in one page). */
async function total(query: string): Promise<number> {
  const res = await call(server, "GET", `/v1/events?limit=100&${query}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const rows = res.body.events as unknown[];
  expect(res.body.pagination.total, query).toBe(rows.length);
  return rows.length;
}

describe("GET /v1/events pagination.total with after/before", () => {
  it("counts ranges whose ends fall inside hours, on hour boundaries, or are open", async () => {
    expect(await total(`after=${T("05:30:00")}&before=${T("08:10:00")}`)).toBe(5);
    expect(await total(`after=${T("06:00:00")}&before=${T("08:00:00")}`)).toBe(3);
    expect(await total(`after=${T("05:30:00")}`)).toBe(7);
    expect(await total(`before=${T("07:15:00")}`)).toBe(4);
    expect(await total(`after=${T("04:00:00")}&before=${T("10:00:00")}`)).toBe(8);
    // No whole hour inside: counted from the rows alone.
    expect(await total(`after=${T("06:15:00")}&before=${T("06:45:00")}`)).toBe(1);
    expect(await total(`after=${T("07:59:59")}&before=${T("08:00:00")}`)).toBe(1);
  });

  it("counts by status, the changed statuses included", async () => {
    expect(await total(`status=failed&after=${T("05:00:00")}`)).toBe(failed.length);
    expect(await total(`status=failed&after=${T("05:30:00")}&before=${T("08:10:00")}`)).toBe(1);
    expect(await total(`status=ignored,failed&before=${T("09:00:00")}`)).toBe(7);
  });

  it("agrees with a count where the rollup does not apply (another filter beside the range)", async () => {
    const res = await call(server, "GET", `/v1/events?limit=100&source_id=${sourceId}&after=${T("05:30:00")}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(7);
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/contracts/ids";
import { events } from "../../src/db/schema";
import { SEARCH_WINDOW_EVENTS } from "../../src/domain/eventSearch";
import { useServer } from "../helpers/fixture";
import { createSource, scopeOf } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";

/**
 * A search's page and `pagination.total` come from one read of the window's
 * matches (src/domain/events.ts, src/domain/paging.ts paginateKeys): they must
 * be what a plain scan of the stored rows gives, with every other filter, at
 * the window's edge, and walked by offset, by cursor forward and back.
 */
let server: TestServer, key: string;
let sourceA: string, sourceB: string;
interface Row {
  id: string;
  t: string;
  body: string;
  source: string;
  status: string;
}
/** Every stored event, newest first as the API orders them. */
let all: Row[] = [];
const START = Date.parse("2026-03-01T00:00:00.000Z");
// Three events a second: ties on received_at are broken by id.
const at = (i: number) => new Date(START + Math.floor(i / 3) * 1000).toISOString();

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  const scope = await scopeOf(server, key);
  sourceA = (await createSource(server, key, "search-pages-a")).id;
  sourceB = (await createSource(server, key, "search-pages-b")).id;
  const rows: (typeof events.$inferInsert)[] = [];
  for (let i = 0; i < SEARCH_WINDOW_EVENTS + 60; i++) {
    const body = i % 37 === 0 ? `{"note":"Needle ${i}"}` : i % 41 === 0 ? `{"x":"NEEDLE_x"}` : i % 13 === 0 ? `{"p":"50%_off"}` : i % 17 === 0 ? `{"p":"50 off"}` : i % 19 === 0 ? `{"ref":"ORDER-42/a${i % 3}"}` : `{"n":${i}}`;
    const row: Row = { id: newId("event"), t: at(i), body, source: i % 2 ? sourceA : sourceB, status: i % 5 === 0 ? "failed" : "ignored" };
    all.push(row);
    const bytes = Buffer.from(body);
    rows.push({
      id: row.id,
      orgId: scope.orgId,
      envId: scope.envId,
      sourceId: row.source,
      method: "POST",
      path: "/",
      contentType: "application/json",
      headers: "{}",
      body: bytes,
      payloadSize: bytes.byteLength,
      verificationStatus: "skipped",
      dedupStatus: "skipped",
      status: row.status,
      receivedAt: row.t,
      routedAt: row.t,
    });
  }
  for (let s = 0; s < rows.length; s += 500) await server.deps.db.insert(events).values(rows.slice(s, s + 500));
  all = all.sort((x, y) => (x.t === y.t ? (x.id < y.id ? 1 : -1) : x.t < y.t ? 1 : -1));
}, 120_000);

interface Query {
  search: string;
  source_id?: string;
  status?: string;
  after?: string;
  before?: string;
}

/** What a plain scan gives: the newest SEARCH_WINDOW_EVENTS within after/before, then the term and the other filters. */
function scan(q: Query): string[] {
  const window = all.filter((r) => (!q.after || r.t >= q.after) && (!q.before || r.t < q.before)).slice(0, SEARCH_WINDOW_EVENTS);
  const term = q.search.toLowerCase();
  const idPrefix = /^(?:evt_)?([0-9a-f]{1,32})$/i.exec(q.search)?.[1]?.toLowerCase();
  return window
    .filter((r) => r.body.toLowerCase().includes(term) || (idPrefix !== undefined && r.id.startsWith(`evt_${idPrefix}`)))
    .filter((r) => (!q.source_id || r.source === q.source_id) && (!q.status || r.status === q.status))
    .map((r) => r.id);
}

async function page(q: Query, extra: Record<string, string>) {
  const params = new URLSearchParams({ ...(q as unknown as Record<string, string>), ...extra });
  const res = await call(server, "GET", `/v1/events?${params}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { events: { id: string }[]; pagination: { total: number; has_more: boolean; offset: number; next_cursor: string | null; prev_cursor: string | null } };
}

/** Every page by next_cursor, then back by prev_cursor from the last one. */
async function walk(q: Query, limit: number) {
  const forward: string[][] = [];
  let body = await page(q, { limit: String(limit) });
  const total = body.pagination.total;
  forward.push(body.events.map((e) => e.id));
  while (body.pagination.next_cursor) {
    body = await page(q, { limit: String(limit), cursor: body.pagination.next_cursor });
    forward.push(body.events.map((e) => e.id));
    expect(body.pagination.total).toBe(total);
  }
  const back: string[][] = [body.events.map((e) => e.id)];
  while (body.pagination.prev_cursor) {
    body = await page(q, { limit: String(limit), cursor: body.pagination.prev_cursor });
    back.unshift(body.events.map((e) => e.id));
  }
  return { total, forward, back };
}

const queries: [string, () => Query][] = [
  ["a term in many bodies, any case (the window's edge falls among them)", () => ({ search: "needle" })],
  ["with source_id", () => ({ search: "NEEDLE", source_id: sourceA })],
  ["with status", () => ({ search: "Needle", status: "failed" })],
  ["LIKE's wildcards taken literally", () => ({ search: "50%_off" })],
  // Digits and punctuation between letters of another case (PostgreSQL narrows by those bytes first, src/db/portableSql.ts).
  ["letters of any case around digits and punctuation", () => ({ search: "order-42/A" })],
  ["with before: the window moves back in time", () => ({ search: "needle", before: all[4000]!.t })],
  ["with after and before", () => ({ search: "needle", after: all[9000]!.t, before: all[200]!.t })],
];

describe("GET /v1/events?search= (pages and total equal a plain scan)", () => {
  for (const [what, query] of queries) {
    it(what, async () => {
      const q = query();
      const expected = scan(q);
      expect(expected.length).toBeGreaterThan(60);
      const { total, forward, back } = await walk(q, 50);
      expect(total).toBe(expected.length);
      expect(forward.flat()).toEqual(expected);
      // Walking back lands on the same pages, the first one included.
      expect(back.flat()).toEqual(expected);
      expect(back[0]).toEqual(forward[0]);
      const offset = await page(q, { limit: "50", offset: "120" });
      expect(offset.events.map((e) => e.id)).toEqual(expected.slice(120, 170));
      expect(offset.pagination).toMatchObject({ total: expected.length, offset: 120, has_more: expected.length > 170 });
      const past = await page(q, { limit: "50", offset: String(expected.length) });
      expect(past.events).toEqual([]);
      expect(past.pagination).toMatchObject({ total: expected.length, has_more: false, next_cursor: null });
    });
  }

  it("finds an event by id at the window's last place and not one place past it", async () => {
    const edge = all[SEARCH_WINDOW_EVENTS - 1]!;
    const outside = all[SEARCH_WINDOW_EVENTS]!;
    const found = await page({ search: edge.id }, {});
    expect(found.events.map((e) => e.id)).toEqual(scan({ search: edge.id }));
    expect(found.events.map((e) => e.id)).toContain(edge.id);
    const missed = await page({ search: outside.id.slice(4) }, {});
    expect(missed.events.map((e) => e.id)).toEqual(scan({ search: outside.id.slice(4) }));
    expect(missed.events.map((e) => e.id)).not.toContain(outside.id);
    expect(missed.pagination.total).toBe(0);
  });

  it("answers an empty page with total 0 when nothing matches", async () => {
    const none = await page({ search: "no-such-text" }, {});
    expect(none.events).toEqual([]);
    expect(none.pagination).toEqual({ total: 0, limit: 50, offset: 0, has_more: false, next_cursor: null, prev_cursor: null });
  });
});

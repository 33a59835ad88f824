import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/contracts/ids";
import { events } from "../../src/db/schema";
import { SEARCH_WINDOW_EVENTS } from "../../src/domain/eventSearch";
import { useServer } from "../helpers/fixture";
import { createSource, scopeOf } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";

/**
 * GET /v1/events?search=… reads bodies, which no index covers: it looks
 * through the newest SEARCH_WINDOW_EVENTS events of the environment within
 * after/before (docs/ingest.md, "Events API"), so its cost does not grow
 * with everything stored.
 */
let server: TestServer, key: string;
const oldIds: string[] = [];
let newest: string;
const START = Date.parse("2026-01-01T00:00:00.000Z");
const at = (i: number) => new Date(START + i * 1000).toISOString();

useServer({}, (s) => ({ server, key } = s));
beforeAll(async () => {
  const scope = await scopeOf(server, key);
  const source = await createSource(server, key, "search-window");
  // Three old events with the needle, then a full window of newer ones, the newest with another needle.
  const total = SEARCH_WINDOW_EVENTS + 3;
  const rows: (typeof events.$inferInsert)[] = [];
  for (let i = 0; i < total; i++) {
    const body = Buffer.from(i < 3 ? `{"note":"needle-old ${i}"}` : i === total - 1 ? '{"note":"needle-new"}' : `{"n":${i}}`);
    const id = newId("event");
    if (i < 3) oldIds.push(id);
    if (i === total - 1) newest = id;
    rows.push({
      id,
      orgId: scope.orgId,
      envId: scope.envId,
      sourceId: source.id,
      method: "POST",
      path: "/",
      contentType: "application/json",
      headers: "{}",
      body,
      payloadSize: body.byteLength,
      verificationStatus: "skipped",
      dedupStatus: "skipped",
      status: "ignored",
      receivedAt: at(i),
      routedAt: at(i),
    });
  }
  for (let s = 0; s < rows.length; s += 500) await server.deps.db.insert(events).values(rows.slice(s, s + 500));
}, 120_000);

const search = async (query: string) => {
  const res = await call(server, "GET", `/v1/events?${query}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { events: { id: string }[]; pagination: { total: number } };
};

describe("GET /v1/events?search= (the search window)", () => {
  it("finds a match among the newest events, by body and by id prefix", async () => {
    const found = await search("search=needle-new");
    expect(found.events.map((e) => e.id)).toEqual([newest]);
    expect(found.pagination.total).toBe(1);
    expect((await search(`search=${newest.slice(4)}`)).events.map((e) => e.id)).toEqual([newest]);
  });

  it("does not read past the newest SEARCH_WINDOW_EVENTS events", async () => {
    const found = await search("search=needle-old");
    expect(found.events).toEqual([]);
    expect(found.pagination.total).toBe(0);
    expect((await search(`search=${oldIds[0]!.slice(4)}`)).pagination.total).toBe(0);
  });

  it("reaches older events when after/before narrow the time, and GET /v1/events/{id} always does", async () => {
    const found = await search(`search=needle-old&before=${encodeURIComponent(at(100))}`);
    expect(found.events.map((e) => e.id).sort()).toEqual([...oldIds].sort());
    expect(found.pagination.total).toBe(3);
    expect((await call(server, "GET", `/v1/events/${oldIds[0]}`, { key })).status).toBe(200);
  });
});

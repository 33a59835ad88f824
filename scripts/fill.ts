/**
 * Fills a store with N events quickly, for the read benchmarks (scripts/bench-reads.ts):
 * `bun scripts/fill.ts --events 500000 (--data-dir DIR | --database-url postgres://…)`.
 *
 * The store must have been started once by `serve` with its sources, a
 * destination and a connection from each source to it (bench-reads.ts makes
 * them over the API): this script writes only events and their attempts,
 * straight through the store's drizzle handle in transactions of BATCH
 * events, so whatever the store maintains as rows are written (counters,
 * rollups) is maintained here too. What the rows look like: the sources of
 * the first environment taken in turn, one attempt per event to the one
 * destination, 0.5% failed (the attempt in the DLQ), bodies of a few hundred
 * bytes, received_at spread evenly over the year before now (or `--span-days`), the newest hour
 * included (so the dashboard's window is not empty).
 */
import { asc, eq } from "drizzle-orm";
import { openStore } from "../src/db/openStore";
import { refreshPlannerStatistics } from "../src/db/portable/loader";
import { connections, deliveryAttempts, destinations, environments, events, sources } from "../src/db/schema";

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const total = Number(arg("events") ?? 50_000);
const dataDir = arg("data-dir") ?? "";
const databaseUrl = arg("database-url");
if (!Number.isInteger(total) || total <= 0 || (!dataDir && !databaseUrl)) {
  console.error("usage: bun scripts/fill.ts --events N (--data-dir DIR | --database-url URL)");
  process.exit(2);
}

const BATCH = 1000;
/** `--span-days D`: received_at spread over the D days before now instead of a year (a busy day: 1). */
const YEAR = Number(arg("span-days") ?? 365) * 24 * 3600_000;
const FAILED_EVERY = 200; // 0.5%

const store = await openStore({ dataDir, databaseUrl });
const db = store.db;
const [env] = await db.select().from(environments).orderBy(asc(environments.createdAt)).limit(1);
if (!env) throw new Error("no environment: start serve once on this store first");
const srcs = await db.select({ id: sources.id }).from(sources).where(eq(sources.envId, env.id)).orderBy(asc(sources.createdAt));
const [dst] = await db.select({ id: destinations.id, url: destinations.url }).from(destinations).where(eq(destinations.envId, env.id)).limit(1);
const conns = await db.select({ id: connections.id, sourceId: connections.sourceId }).from(connections).where(eq(connections.envId, env.id));
if (srcs.length === 0 || !dst) throw new Error("need at least one source and one destination in the first environment");
const connOf = new Map(conns.map((c) => [c.sourceId, c.id]));

const types = ["order.created", "order.paid", "invoice.finalized", "customer.updated", "charge.refunded"];
const headers = JSON.stringify({ "content-type": "application/json", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)", "x-request-id": "req_0000" });

function body(i: number, type: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: `evt_fill_${i}`,
      type,
      created: 1_700_000_000 + i,
      data: { object: { id: `ord_${i}`, amount: (i * 37) % 100_000, currency: "eur", customer: `cus_${i % 5000}`, items: [{ sku: `sku_${i % 97}`, qty: 1 + (i % 3) }], note: "filled for the read benchmark" } },
    }),
  );
}

const now = Date.now();
const started = performance.now();
for (let done = 0; done < total; done += BATCH) {
  const n = Math.min(BATCH, total - done);
  const eventRows: (typeof events.$inferInsert)[] = [];
  const attemptRows: (typeof deliveryAttempts.$inferInsert)[] = [];
  for (let k = 0; k < n; k++) {
    const i = done + k;
    // Oldest first, so ids (UUIDv7 of the time) and received_at agree as they do for ingested events.
    const at = now - YEAR + Math.floor(((i + 1) * YEAR) / total) - 1;
    const receivedAt = new Date(at).toISOString();
    const id = "evt_" + Bun.randomUUIDv7("hex", at).replaceAll("-", "");
    const source = srcs[i % srcs.length]!.id;
    const failed = i % FAILED_EVERY === FAILED_EVERY - 1;
    const type = types[i % types.length]!;
    const payload = body(i, type);
    eventRows.push({
      id,
      orgId: env.orgId,
      envId: env.id,
      sourceId: source,
      method: "POST",
      path: "/",
      query: null,
      contentType: "application/json",
      sourceIp: "203.0.113.7",
      headers,
      body: payload,
      payloadSize: payload.length,
      verificationStatus: "verified",
      dedupStatus: "unique",
      status: failed ? "failed" : "delivered",
      eventType: type,
      receivedAt,
      routedAt: receivedAt,
    });
    const sentAt = new Date(at + 40).toISOString();
    attemptRows.push({
      id: "da_" + Bun.randomUUIDv7("hex", at).replaceAll("-", ""),
      orgId: env.orgId,
      envId: env.id,
      eventId: id,
      connectionId: connOf.get(source) ?? null,
      destinationId: dst.id,
      requestUrl: dst.url,
      requestMethod: "POST",
      requestHeaders: null,
      requestBodySize: payload.length,
      responseStatus: failed ? 503 : 200,
      responseHeaders: null,
      responseBody: failed ? "unavailable" : "ok",
      durationMs: 20 + (i % 50),
      status: failed ? "failed" : "success",
      error: failed ? "http_503" : null,
      errorDetail: null,
      attemptNumber: 1,
      isDlq: failed ? 1 : 0,
      dlqAt: failed ? sentAt : null,
      triggerType: "initial",
      scheduledAt: receivedAt,
      sentAt,
      createdAt: receivedAt,
    });
  }
  await db.transaction(async (tx) => {
    // 20-odd columns a row: 250 rows a statement stays under both dialects' bound-parameter limits.
    for (let s = 0; s < eventRows.length; s += 250) await tx.insert(events).values(eventRows.slice(s, s + 250));
    for (let s = 0; s < attemptRows.length; s += 250) await tx.insert(deliveryAttempts).values(attemptRows.slice(s, s + 250));
  });
  if ((done / BATCH) % 50 === 0) process.stderr.write(`\r${done + n} / ${total}`);
}
// What autovacuum would have done by the time a store this size served anyone (src/db/portable/loader.ts says why it matters).
await refreshPlannerStatistics(db);
const seconds = (performance.now() - started) / 1000;
process.stderr.write("\n");
console.log(`filled ${total} events (and as many attempts) in ${seconds.toFixed(1)} s: ${Math.round(total / seconds)} events/s`);
await store.close();

import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { createSource, hmacHex, ingest } from "../helpers/ingest";
import { scrapeMetrics } from "../helpers/metrics";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/**
 * Rejected requests keep their bodies for debugging, but a source that
 * receives only rejected ones stores at most HOOKRELAY_REJECTED_STORE_PER_MINUTE
 * of them a minute; the rest are answered the same and counted, not stored
 * (docs/ingest.md "Rejected requests"). Time is the injected clock's: the
 * budget refills only when the test moves it.
 */
const clock = manualClock();
let server: TestServer, key: string;
useServer({ clock, env: { HOOKRELAY_REJECTED_STORE_PER_MINUTE: "3" } }, (s) => ({ server, key } = s));

const SECRET = "budget-secret";
const storedRejected = async (sourceId: string) => (await call(server, "GET", `/v1/events?source_id=${sourceId}&status=rejected&limit=1`, { key })).body.pagination.total as number;
const notStoredMetric = async (outcome: string) => {
  const line = (await scrapeMetrics(server)).split("\n").find((l) => l.startsWith(`hookrelay_ingest_rejected_not_stored_total{outcome="${outcome}"}`));
  return line ? Number(line.split(" ").pop()) : 0;
};

async function badSignature(sourceId: string) {
  const res = await ingest(server, sourceId, { body: '{"n":1}', headers: { "x-signature": "sha256=" + "0".repeat(64) } });
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe("signature_invalid");
  return res.body.error.details as { event_id?: string; stored?: false; reason: string };
}

describe("rejected requests past the per-source budget", () => {
  it("are answered the same but counted, not stored, until the budget refills", async () => {
    const source = await createSource(server, key, { name: "junk target", template: "generic-hmac-sha256", verification_secret: SECRET });
    const before = await notStoredMetric("signature_invalid");

    const first = [await badSignature(source.id), await badSignature(source.id), await badSignature(source.id)];
    for (const d of first) expect(d.event_id).toMatch(/^evt_/);
    const past = [await badSignature(source.id), await badSignature(source.id)];
    for (const d of past) {
      expect(d.event_id).toBeUndefined();
      expect(d.stored).toBe(false);
      expect(d.reason).toMatch(/does not match/);
    }
    expect(await storedRejected(source.id)).toBe(3);
    expect(await notStoredMetric("signature_invalid")).toBe(before + 2);

    // Accepted requests are not limited, nor do they use the budget.
    const body = '{"ok":true}';
    const good = await ingest(server, source.id, { body, headers: { "x-signature": hmacHex("sha256", SECRET, body) } });
    expect(good.status).toBe(200);
    expect((await badSignature(source.id)).stored).toBe(false);

    // Another source has a budget of its own.
    const other = await createSource(server, key, { name: "other", template: "generic-hmac-sha256", verification_secret: SECRET });
    expect((await badSignature(other.id)).event_id).toMatch(/^evt_/);

    // 3 a minute: one more every 20 s.
    clock.advance(20_000);
    expect((await badSignature(source.id)).event_id).toMatch(/^evt_/);
    expect((await badSignature(source.id)).stored).toBe(false);
    clock.advance(5 * 60_000);
    const refilled = [await badSignature(source.id), await badSignature(source.id), await badSignature(source.id), await badSignature(source.id)];
    expect(refilled.map((d) => d.event_id !== undefined)).toEqual([true, true, true, false]);
    expect(await storedRejected(source.id)).toBe(7);
    expect(await notStoredMetric("signature_invalid")).toBe(before + 5);
  });

  it("bounds schema rejections from the same budget", async () => {
    const source = await createSource(server, key, {
      name: "schema junk",
      schema_validation_enabled: true,
      schema_action: "reject",
      json_schema: { type: "object", required: ["id"] },
    });
    const statuses: (string | false | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await ingest(server, source.id, { body: '{"no":"id"}' });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe("schema_violation");
      expect(res.body.error.details.errors.length).toBeGreaterThan(0);
      statuses.push(res.body.error.details.event_id ?? res.body.error.details.stored);
    }
    expect(statuses.slice(0, 3).every((s) => typeof s === "string" && s.startsWith("evt_"))).toBe(true);
    expect(statuses[3]).toBe(false);
    expect(await storedRejected(source.id)).toBe(3);
    expect(await notStoredMetric("schema_violation")).toBe(1);
  });
});

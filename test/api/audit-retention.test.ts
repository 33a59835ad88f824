import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { auditLog } from "../../src/db/schema";
import { DEFAULT_AUDIT_RETENTION_DAYS, pruneOldAuditEntries } from "../../src/domain/retention";
import { manualClock } from "../../src/core/clock";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

describe("retention (HOOKRELAY_AUDIT_RETENTION_DAYS)", () => {
  const clock = manualClock(new Date());
  let clocked: TestServer, clockedKey: string;
  useServer({ clock, env: { HOOKRELAY_AUDIT_RETENTION_DAYS: "30" } }, (f) => ({ server: clocked, key: clockedKey } = f));
  const DAY = 24 * 3600 * 1000;
  const entriesOf = async (id: string) => clocked.deps.db.$count(auditLog, eq(auditLog.resourceId, id));
  const createType = async (name: string) => {
    const res = await call(clocked, "POST", "/v1/event-types", { key: clockedKey, body: { name } });
    expect(res.status).toBe(201);
    return res.body.event_type.id as string;
  };

  it("prunes entries older than the retention in batches; newer ones stay", async () => {
    expect(clocked.deps.settings.auditRetentionDays).toBe(30);
    const old1 = await createType("old.one");
    const old2 = await createType("old.two");
    clock.advance(20 * DAY);
    const recent = await createType("recent.one");
    // 29 days on, the oldest are within the retention: nothing goes.
    clock.advance(9 * DAY);
    expect(await pruneOldAuditEntries(clocked.deps)).toBe(0);
    clock.advance(2 * DAY);
    expect(await pruneOldAuditEntries(clocked.deps, { batch: 1 })).toBeGreaterThanOrEqual(2);
    expect(await entriesOf(old1)).toBe(0);
    expect(await entriesOf(old2)).toBe(0);
    expect(await entriesOf(recent)).toBe(1);
    expect(await pruneOldAuditEntries(clocked.deps)).toBe(0);
  });

  it("keeps a year by default", async () => {
    expect(DEFAULT_AUDIT_RETENTION_DAYS).toBe(365);
    const settings = { ...clocked.deps.settings, auditRetentionDays: undefined };
    const id = await createType("kept.long");
    clock.advance(364 * DAY);
    await pruneOldAuditEntries({ ...clocked.deps, settings });
    expect(await entriesOf(id)).toBe(1);
    clock.advance(2 * DAY);
    await pruneOldAuditEntries({ ...clocked.deps, settings });
    expect(await entriesOf(id)).toBe(0);
  });
});

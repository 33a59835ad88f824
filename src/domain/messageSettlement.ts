import { eq, sql } from "drizzle-orm";
import type { MessageStatus } from "../contracts/messages";
import type { Db } from "../db/db";
import { ph, preparedFor } from "../db/prepared";
import { events, messages } from "../db/schema";
import { iso } from "../core/clock";
import type { ChangedEvent } from "./eventStatus";

/**
 * A message's status is kept by counters, not by aggregating its attempts
 * (docs/outbound.md): every delivery chain that ends counts against its
 * message. Run inside the recording transaction by the delivery queue
 * (src/delivery/queue.ts) and by deleting an endpoint (src/outbound/endpoints.ts).
 */

/**
 * One delivery chain of a message starts again (a resend, a redrive, a
 * recovery): it counts as outstanding, the `leftDlq` of its rows that left
 * the DLQ no longer count as failed, and the message reads `pending` until it
 * settles. `which` picks the message (by its id or by its event's).
 */
export async function restartMessageChain(db: Db, which: { messageId: string } | { eventId: string }, leftDlq: number, now: Date) {
  return db
    .update(messages)
    .set({
      outstanding: sql`${messages.outstanding} + 1`,
      failed: sql`CASE WHEN ${messages.failed} > ${leftDlq} THEN ${messages.failed} - ${leftDlq} ELSE 0 END`,
      status: "pending",
      updatedAt: iso(now),
    })
    .where("messageId" in which ? eq(messages.id, which.messageId) : eq(messages.eventId, which.eventId))
    .returning({ id: messages.id });
}

/** Delivery chains of one message that ended in a recorded batch, `dlq` of them in the DLQ. */
export interface MessageSettlement {
  settled: number;
  dlq: number;
}

/** Prepared once per SQLite database, built per call on PostgreSQL (src/db/prepared.ts): they run in the delivery pump's write transaction. */
const settleStatements = preparedFor((db: Db) => {
  const m = messages;
  const stillOutstanding = sql`${m.outstanding} > ${ph("settled")}`;
  return {
    settle: db
      .update(m)
      .set({
        outstanding: sql`CASE WHEN ${stillOutstanding} THEN ${m.outstanding} - ${ph("settled")} ELSE 0 END`,
        failed: sql`${m.failed} + ${ph("dlq")}`,
        status: sql`CASE WHEN ${stillOutstanding} THEN ${m.status} WHEN ${m.failed} + ${ph("dlq")} > 0 THEN 'failed' ELSE 'delivered' END`,
        updatedAt: sql`CASE WHEN ${stillOutstanding} THEN ${m.updatedAt} ELSE ${ph("now")} END`,
      })
      .where(eq(m.eventId, ph("eventId")))
      .returning({ outstanding: m.outstanding, status: m.status, orgId: m.orgId, envId: m.envId })
      .prepare(),
    eventStatus: db.update(events).set({ status: ph("status") }).where(eq(events.id, ph("id"))).returning({ sourceId: events.sourceId }).prepare(),
  };
});

/**
 * Counts settled delivery chains against their messages: one UPDATE per
 * message per recorded batch, however many endpoints it went to. A message
 * with nothing outstanding left becomes `failed` (a chain in the DLQ) or
 * `delivered`, and its event takes the same status. Events that are no
 * message's come back in `unknown`: their status is the engine's to refresh.
 */
export async function settleMessages(db: Db, settlements: ReadonlyMap<string, MessageSettlement>, now: Date): Promise<{ changed: ChangedEvent[]; unknown: string[] }> {
  const changed: ChangedEvent[] = [];
  const unknown: string[] = [];
  if (settlements.size === 0) return { changed, unknown };
  const s = settleStatements(db);
  const at = iso(now);
  for (const [eventId, { settled, dlq }] of settlements) {
    const [m] = await s.settle.execute({ eventId, settled, dlq, now: at });
    if (!m) {
      unknown.push(eventId);
      continue;
    }
    if (m.outstanding > 0) continue;
    const [e] = await s.eventStatus.execute({ id: eventId, status: m.status });
    if (e) changed.push({ id: eventId, orgId: m.orgId, envId: m.envId, sourceId: e.sourceId, status: m.status as MessageStatus });
  }
  return { changed, unknown };
}

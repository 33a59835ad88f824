import { and, eq, inArray, isNull } from "drizzle-orm";
import type { TriggerType } from "../contracts/deliveryAttempts";
import { deliveryAttempts, events } from "../db/schema";
import type { Tx } from "../db/transaction";
import { iso } from "../core/clock";
import { newQueuedAttempt } from "./deliveries";
import { restartMessageChain } from "./messageSettlement";
import { clearedDlqColumns, resumeLine } from "./ordering";

/**
 * Starts one delivery chain again (an event to one destination, through one
 * connection or, for an application endpoint, through none): the chain
 * leaves the DLQ (is_dlq 0; dlq_at stays as history) and a new queued row
 * starts it with a fresh retry budget. A delivery still outstanding is not
 * doubled. Used by DLQ redrive (redrive.ts) and recovery (recovery.ts).
 *
 * An endpoint's chain belongs to a message, whose status is kept by counters
 * (messageSettlement.ts): the new chain counts as outstanding and the one
 * that left the DLQ no longer counts as failed, as a resend does
 * (src/outbound/resend.ts), so the message reads `pending` until it settles.
 */
export interface ChainToRequeue {
  orgId: string;
  envId: string;
  eventId: string;
  connectionId: string | null;
  destinationId: string;
}

export async function requeueChain(
  tx: Tx,
  chain: ChainToRequeue,
  target: { url: string; method: string },
  fields: { triggerType: Exclude<TriggerType, "retry" | "replay">; now: Date; jobId: string },
): Promise<{ queued: boolean }> {
  const same = and(
    eq(deliveryAttempts.eventId, chain.eventId),
    eq(deliveryAttempts.destinationId, chain.destinationId),
    chain.connectionId ? eq(deliveryAttempts.connectionId, chain.connectionId) : isNull(deliveryAttempts.connectionId),
  );
  const cleared = await tx.update(deliveryAttempts).set({ isDlq: 0 }).where(and(same, eq(deliveryAttempts.isDlq, 1))).returning(clearedDlqColumns);
  const leftDlq = cleared.length;
  const [outstanding] = await tx
    .select({ id: deliveryAttempts.id })
    .from(deliveryAttempts)
    .where(and(same, inArray(deliveryAttempts.status, ["queued", "delivering"])))
    .limit(1);
  // A blocked line's head that leaves the DLQ moves its line on, or stays its head through the new row (src/domain/ordering.ts).
  if (outstanding) {
    await resumeLine(tx, cleared, null, iso(fields.now));
    return { queued: false };
  }
  const next = newQueuedAttempt({ ...chain, requestUrl: target.url, requestMethod: target.method, triggerType: fields.triggerType, now: fields.now, jobId: fields.jobId });
  await resumeLine(tx, cleared, next, iso(fields.now));
  await tx.insert(deliveryAttempts).values(next);
  if (chain.connectionId === null) {
    const [message] = await restartMessageChain(tx, { eventId: chain.eventId }, leftDlq, fields.now);
    if (message) await tx.update(events).set({ status: "pending" }).where(eq(events.id, chain.eventId));
  }
  return { queued: true };
}

import { z } from "zod";

/** Ordered delivery's lines (docs/delivery.md, "Ordered delivery"). */

export const orderingLine = z.object({
  key: z.string().nullable().describe("The ordering key; null: the line of events whose key path was missing (or of a connection without a key path)"),
  head_attempt_id: z.string().nullable().describe("The attempt the line waits on: queued for its retry, in flight, or in the DLQ (blocked)"),
  waiting: z.number().int().describe("Deliveries held behind the head"),
  since: z.string().describe("Blocked: when the head reached the DLQ; otherwise when the oldest held delivery was received"),
  blocked: z.boolean().describe("The head is in the DLQ and on_dlq is block: the key moves on after a redrive or a skip"),
});
export type OrderingLineDto = z.infer<typeof orderingLine>;

export const orderingList = z.object({ keys: z.array(orderingLine).describe("Keys waiting or blocked, the longest waiting first (at most 1,000)") });

export const skipOrderingInput = z.object({
  key: z.string().max(256).nullable().describe("The key to move on; null: the null-key line"),
});
export type SkipOrderingInput = z.infer<typeof skipOrderingInput>;

export const skipOrderingResult = z.object({
  key: z.string().nullable(),
  skipped_attempt_id: z.string().describe("The head left in the DLQ (it can still be redriven)"),
});

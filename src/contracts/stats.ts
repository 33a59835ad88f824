import { z } from "zod";

/** GET /v1/stats: the dashboard's numbers for the caller's org and environment in one answer. */

export const STATS_WINDOW_HOURS = 24;

export const statsBucket = z.object({
  start: z.string().describe("Start of the hour (ISO 8601, UTC); the bucket covers one hour from it"),
  received: z.number().int().describe("Events received in the hour"),
  delivered: z.number().int().describe("Of those events, how many are now `delivered`"),
  failed: z.number().int().describe("Of those events, how many are now `failed` (a delivery in the DLQ)"),
  deliveries_failed: z
    .number()
    .int()
    .describe("Delivery attempts created in the hour that failed, whether or not a retry followed (the buckets add up to `deliveries_failed_24h`)"),
});
export type StatsBucket = z.infer<typeof statsBucket>;

export const slowDestination = z.object({
  destination_id: z.string(),
  destination_name: z.string().nullable().describe("null when the destination has since been deleted"),
  p50_ms: z.number().int().describe("Median duration"),
  avg_ms: z.number().int().describe("Average duration, rounded to the millisecond"),
  max_ms: z.number().int().describe("Slowest attempt"),
  attempts: z.number().int().describe("Attempts in the window that have a duration (the request went out)"),
});
export type SlowDestination = z.infer<typeof slowDestination>;

export const statsBody = z.object({
  window_hours: z.number().int().describe("The window: the current clock hour (UTC) and the 23 before it"),
  buckets: z.array(statsBucket).describe("One per hour of the window, oldest first; the last is the current, partial hour"),
  events_received_24h: z.number().int().describe("Events received in the window (the sum of the buckets' `received`)"),
  deliveries_succeeded_24h: z.number().int().describe("Delivery attempts created in the window that succeeded (retries and replays included)"),
  deliveries_failed_24h: z.number().int().describe("Delivery attempts created in the window that failed, whether or not a retry followed"),
  success_rate: z.number().min(0).max(1).nullable().describe("succeeded / (succeeded + failed); null when no attempt in the window has finished"),
  dlq_size: z.number().int().describe("Deliveries in the dead-letter queue now"),
  queue_depth: z.number().int().describe("Attempts queued or delivering now"),
  oldest_pending_seconds: z.number().int().describe("How long the longest-waiting due attempt (queued or delivering) has been due; 0 when none is"),
  slowest_destinations: z.array(slowDestination).describe("Top 5 by average attempt duration over the window"),
  open_issues: z.number().int().describe("Issues with status open now (the dashboard's Open issues card)"),
  counts: z
    .object({ sources: z.number().int(), destinations: z.number().int(), connections: z.number().int() })
    .describe("How many sources, destinations and connections the environment has"),
});
export type StatsBody = z.infer<typeof statsBody>;

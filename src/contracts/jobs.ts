import { z } from "zod";

/** Background jobs with visible progress: replay, bulk retry, DLQ redrive, recovery by time. */

export const JOB_KINDS = ["replay", "bulk_retry", "redrive", "recover"] as const;
export type JobKind = (typeof JOB_KINDS)[number];
export const JOB_STATUSES = ["running", "completed"] as const;

/** Progress of a job. GET /v1/replay/{job_id} answers the same shape for replays. */
export const jobProgress = z.object({
  job_id: z.string(),
  kind: z.enum(JOB_KINDS),
  status: z.enum(JOB_STATUSES),
  total: z.number().int(),
  processed: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  /** Matching items the job leaves alone on purpose: rejected events (never retried, redriven or replayed). */
  skipped: z.number().int(),
  started_at: z.string(),
  completed_at: z.string().nullable(),
});
export type JobProgress = z.infer<typeof jobProgress>;

export const REPLAY_LIMITS = {
  rateLimit: { default: 10, max: 100 },
  maxEvents: { default: 1000, max: 10_000 },
} as const;

/** ISO 8601: a date, or a date-time with optional seconds, fraction and offset. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
export const iso8601 = z
  .string()
  .refine((s) => ISO_8601.test(s) && !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z");

export const replayInput = z
  .object({
    destination_id: z.string().min(1).max(100),
    from: iso8601,
    to: iso8601,
    source_id: z.string().min(1).max(100).optional(),
    connection_id: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe("Replay through this connection (one to destination_id): only its source's events, only those its filter passes, shaped by its transform"),
    rate_limit: z.int().min(1).max(REPLAY_LIMITS.rateLimit.max).default(REPLAY_LIMITS.rateLimit.default),
    max_events: z.int().min(1).max(REPLAY_LIMITS.maxEvents.max).default(REPLAY_LIMITS.maxEvents.default),
  })
  .refine((v) => Date.parse(v.from) <= Date.parse(v.to), { message: "must not be after to", path: ["from"] });
export type ReplayInput = z.infer<typeof replayInput>;

export const replayStarted = z.object({ job_id: z.string(), status: z.literal("running"), total: z.number().int() });

export const jobIdParam = z.object({ job_id: z.string() });

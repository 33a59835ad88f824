import { z } from "zod";
import { listEventsQuery } from "./events";

/** Event retry (spec: POST /events/:id/retry) and bulk retry (docs/decisions.md D7). */

export const retryResult = z.object({
  retried: z.array(
    z.object({
      destination_id: z.string(),
      connection_id: z.string(),
      /** The queued delivery (an already outstanding one is reused, not doubled). */
      attempt_id: z.string(),
      status: z.literal("queued"),
    }),
  ),
  errors: z.array(
    z.object({
      destination_id: z.string(),
      connection_id: z.string(),
      code: z.enum(["connection_disabled", "destination_disabled", "filter_not_matched"]),
      message: z.string(),
    }),
  ),
});

/** The optional body of POST /v1/events/{id}/retry. */
export const retryEventInput = z.object({
  force: z
    .boolean()
    .optional()
    .describe("Deliver a rejected event (failed signature or schema) too; for an operator who has checked its payload. The attempts are marked forced; the event stays rejected"),
});

/** The filters of GET /v1/events, without paging: in the JSON body, the query string, or both (the body wins). */
export const bulkRetryFilters = listEventsQuery.omit({ limit: true, offset: true, cursor: true, direction: true });

/** What starting a bulk retry answers (202): no job, and a null job_id, when no event is left to retry. */
export const bulkRetryStarted = z.object({
  job_id: z.string().nullable().describe("The job retrying the events; null when nothing matched (no job is created)"),
  total: z.number().int().describe("Events the job will retry"),
  skipped: z.number().int().describe("Events matching the filter left alone: rejected events are never retried"),
});

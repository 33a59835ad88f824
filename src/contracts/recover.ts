import { z } from "zod";
import { iso8601 } from "./jobs";

/**
 * Recovery by time (docs/delivery.md, "Recovering an outage"): re-send what
 * an endpoint or destination missed. The window is checked here for shape;
 * the domain bounds it to the retention period and to now.
 */
export const recoverInput = z
  .object({
    since: iso8601.describe("Start of the window (inclusive): failures recorded at or after it are recovered"),
    until: iso8601.optional().describe("End of the window (exclusive); default now"),
  })
  .refine((v) => v.until === undefined || Date.parse(v.until) > Date.parse(v.since), { message: "must be after since", path: ["until"] });
export type RecoverInput = z.infer<typeof recoverInput>;

export const recoverStarted = z.object({
  job_id: z.string().describe("The job re-sending them: GET /v1/jobs/{job_id}"),
  total: z.number().int().describe("Messages (events) whose latest attempt there failed within the window"),
  skipped: z.number().int().describe("Of those, rejected events: never re-sent"),
});
export type RecoverStarted = z.infer<typeof recoverStarted>;

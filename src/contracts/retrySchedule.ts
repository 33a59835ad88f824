import { z } from "zod";
import { fromJsonText } from "./common";

import { RETRY_SCHEDULE_EXAMPLE, RETRY_SCHEDULE_MAX_STEPS, RETRY_STEP_MAX_SECONDS, RETRY_STEP_MIN_SECONDS, retryStepSeconds } from "./retrySteps";

export { RETRY_SCHEDULE_EXAMPLE, RETRY_SCHEDULE_MAX_STEPS, RETRY_STEP_MAX_SECONDS, RETRY_STEP_MIN_SECONDS, retryStepSeconds };

/** A stored schedule (its JSON text) as seconds per retry; null when there is none or it cannot be read. */
export function retryScheduleSeconds(stored: string | null | undefined): number[] | null {
  if (!stored) return null;
  try {
    const steps = JSON.parse(stored) as unknown;
    if (!Array.isArray(steps) || steps.length === 0) return null;
    const seconds = steps.map((s) => (typeof s === "string" ? retryStepSeconds(s) : null));
    return seconds.every((s): s is number => s !== null) ? seconds : null;
  } catch {
    return null;
  }
}

const retryStep = z
  .string()
  .max(8, "a step is at most 8 characters, e.g. 30m")
  .superRefine((s, ctx) => {
    const seconds = retryStepSeconds(s);
    if (seconds === null) ctx.addIssue({ code: "custom", message: `"${s}" is not a duration such as 5s, 5m, 2h or 1d` });
    else if (seconds < RETRY_STEP_MIN_SECONDS || seconds > RETRY_STEP_MAX_SECONDS) ctx.addIssue({ code: "custom", message: `"${s}" is not between 1s and 7d` });
  });

/**
 * Input: an array of durations, or its JSON text (what GET returns, docs/decisions.md D3);
 * null clears the schedule.
 */
export const retryScheduleInput = z
  .preprocess(
    fromJsonText,
    z.array(retryStep).min(1, "a schedule has at least one step").max(RETRY_SCHEDULE_MAX_STEPS, `a schedule has at most ${RETRY_SCHEDULE_MAX_STEPS} steps`).nullable(),
  )
  .meta({
    description: `The delay before each retry, used instead of the retry policy (a destination's retry_strategy, retry_interval_seconds and max_retries; an endpoint's defaults) when set; its length is the number of retries. 1 to ${RETRY_SCHEDULE_MAX_STEPS} durations of 1s to 7d; null: none`,
    examples: [RETRY_SCHEDULE_EXAMPLE],
  });

export const retryScheduleOutput = z
  .string()
  .nullable()
  .meta({ description: "JSON array of durations, encoded as a string; null: the retry policy applies", examples: [JSON.stringify(RETRY_SCHEDULE_EXAMPLE)] });

/** A schedule as stored: its JSON text, or null. */
export const retryScheduleText = (steps: readonly string[] | null | undefined) => (steps && steps.length > 0 ? JSON.stringify(steps) : null);

/** The retry schedule field of the destination and endpoint forms: steps typed comma-separated, checked as the API checks them. */
import { RETRY_SCHEDULE_MAX_STEPS, RETRY_STEP_MAX_SECONDS, RETRY_STEP_MIN_SECONDS, retryStepSeconds } from "../../src/contracts/retrySteps";

export const RETRY_SCHEDULE_HELP = "Delays before each retry, comma-separated, e.g. 5s, 5m, 30m, 2h, 5h, 10h, 10h. Replaces the strategy, interval and max retries. Empty: none.";
export const ENDPOINT_RETRY_SCHEDULE_HELP = "Delays before each retry, comma-separated, e.g. 5s, 5m, 30m, 2h, 5h, 10h, 10h. Empty: the default exponential retries.";
export const RETRY_SCHEDULE_PLACEHOLDER = "5s, 5m, 30m, 2h, 5h, 10h, 10h";

/** A stored schedule (JSON text) as the field shows it. */
export function scheduleText(stored: string | null): string {
  if (!stored) return "";
  try {
    const steps = JSON.parse(stored) as unknown;
    return Array.isArray(steps) ? steps.join(", ") : stored;
  } catch {
    return stored;
  }
}

/** What the field holds as the API takes it (null: no schedule), or the message to show under it. */
export function readSchedule(text: string): { steps: string[] | null } | { error: string } {
  const steps = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (steps.length === 0) return { steps: null };
  if (steps.length > RETRY_SCHEDULE_MAX_STEPS) return { error: `At most ${RETRY_SCHEDULE_MAX_STEPS} steps (this has ${steps.length})` };
  for (const step of steps) {
    const seconds = step.length > 8 ? null : retryStepSeconds(step);
    if (seconds === null) return { error: `“${step}” is not a duration such as 5s, 5m, 2h or 1d` };
    if (seconds < RETRY_STEP_MIN_SECONDS || seconds > RETRY_STEP_MAX_SECONDS) return { error: `“${step}” is not between 1s and 7d` };
  }
  return { steps };
}

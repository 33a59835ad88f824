import type { Issue } from "../contracts/issues";
import { attemptOutcomes, dlqArrivals, eventsArrived, latencyPercentile, scopeNames } from "../domain/alertMeasurements";
import type { ActiveRule } from "../domain/alertRules";
import type { Deps } from "../domain/deps";

/** Why a rule fires: the reason in words and the measured numbers. */
export interface Trigger {
  reason: string;
  data: Record<string, unknown>;
  /** Where the admin UI shows it (a path under the base URL). */
  path: string;
}

const MINUTE = 60_000;
const round1 = (n: number) => Math.round(n * 10) / 10;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const minutes = (n: number) => plural(n, "minute");

/** " to Orders API from GitHub": what the rule watches, in the reason's words. */
async function scopeWords(deps: Deps, rule: ActiveRule): Promise<string> {
  if (!rule.sourceId && !rule.destinationId) return "";
  const names = await scopeNames(deps, rule);
  return `${names.destination ? ` to ${names.destination}` : ""}${names.source ? ` from ${names.source}` : ""}`;
}

/**
 * Evaluates a periodic rule (failure_rate, latency, dlq, volume_drop) at
 * `now`: the trigger when its condition holds, else null. Cooldown is not
 * looked at here (claimTrigger does, atomically).
 */
export async function evaluateRule(deps: Deps, rule: ActiveRule, now: Date): Promise<Trigger | null> {
  const path = `/alert-rules/${rule.id}`;
  switch (rule.ruleType) {
    case "failure_rate": {
      const c = rule.config as ActiveRule<"failure_rate">["config"];
      const since = new Date(now.getTime() - c.window_minutes * MINUTE);
      const { succeeded, failed } = await attemptOutcomes(deps, rule, since);
      const attempts = succeeded + failed;
      if (attempts === 0 || attempts < c.min_attempts) return null;
      const percent = (failed / attempts) * 100;
      if (percent < c.threshold_percent) return null;
      return {
        reason: `${round1(percent)}% of deliveries${await scopeWords(deps, rule)} failed in the last ${minutes(c.window_minutes)} (${failed} of ${attempts}; threshold ${c.threshold_percent}%)`,
        data: { failure_percent: round1(percent), failed, succeeded, attempts, threshold_percent: c.threshold_percent, min_attempts: c.min_attempts, window_minutes: c.window_minutes },
        path,
      };
    }
    case "latency": {
      const c = rule.config as ActiveRule<"latency">["config"];
      const since = new Date(now.getTime() - c.window_minutes * MINUTE);
      const { samples, valueMs } = await latencyPercentile(deps, rule, since, c.percentile);
      if (valueMs === null || valueMs < c.threshold_ms) return null;
      return {
        reason: `p${c.percentile} delivery latency${await scopeWords(deps, rule)} was ${valueMs} ms over the last ${minutes(c.window_minutes)} (${plural(samples, "attempt")}; threshold ${c.threshold_ms} ms)`,
        data: { latency_ms: valueMs, percentile: c.percentile, threshold_ms: c.threshold_ms, samples, window_minutes: c.window_minutes },
        path,
      };
    }
    case "dlq": {
      const c = rule.config as ActiveRule<"dlq">["config"];
      const since = new Date(now.getTime() - c.window_minutes * MINUTE);
      const arrived = await dlqArrivals(deps, rule, since);
      if (arrived < c.threshold) return null;
      return {
        reason: `${plural(arrived, "delivery", "deliveries")}${await scopeWords(deps, rule)} landed in the dead-letter queue in the last ${minutes(c.window_minutes)} (threshold ${c.threshold})`,
        data: { dlq_count: arrived, threshold: c.threshold, window_minutes: c.window_minutes },
        path,
      };
    }
    case "volume_drop": {
      const c = rule.config as ActiveRule<"volume_drop">["config"];
      const window = c.window_minutes * MINUTE;
      // A rule younger than its window has not watched a whole window yet: nothing has dropped.
      if (now.getTime() - Date.parse(rule.createdAt) < window) return null;
      const arrived = await eventsArrived(deps, rule, new Date(now.getTime() - window));
      if (arrived >= c.min_events) return null;
      return {
        reason: `Only ${plural(arrived, "event")} arrived${await scopeWords(deps, rule)} in the last ${minutes(c.window_minutes)} (expected at least ${c.min_events})`,
        data: { events: arrived, min_events: c.min_events, window_minutes: c.window_minutes },
        path,
      };
    }
    case "issue_opened":
      return null;
  }
}

/** An issue_opened rule's trigger for one issue. */
export function issueTrigger(issue: Issue): Trigger {
  const where = issue.destination_name ? ` at ${issue.destination_name}` : "";
  const detail = issue.last_error ? `: ${issue.last_error}` : "";
  return {
    reason: `Issue opened${where}: ${issue.title} (${plural(issue.occurrence_count, "failed attempt")})${detail}`,
    data: {
      issue_id: issue.id,
      destination_id: issue.destination_id,
      destination_name: issue.destination_name,
      fingerprint: issue.fingerprint,
      title: issue.title,
      occurrence_count: issue.occurrence_count,
      last_status_code: issue.last_status_code,
    },
    path: `/issues/${issue.id}`,
  };
}

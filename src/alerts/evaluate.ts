import type { Issue } from "../contracts/issues";
import {
  attemptOutcomes,
  dlqArrivals,
  eventsArrived,
  latencyPercentile,
  newAttemptOutcomes,
  newDlqArrivals,
  newLatencyPercentile,
  scopeNames,
  type Mark,
} from "../domain/alertMeasurements";
import { iso } from "../core/clock";
import type { ActiveRule } from "../domain/activeAlertRules";
import type { Deps } from "../domain/deps";

/** Why a rule fires: the reason in words and the measured numbers. */
export interface Trigger {
  reason: string;
  data: Record<string, unknown>;
  /** Where the admin UI shows it (a path under the base URL). */
  path: string;
  /** A periodic rule's high-water mark once this is reported: what the trigger counted. */
  mark?: Mark;
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
 * A periodic rule at `now`. `holds`: its condition over the whole window; a
 * firing rule whose condition no longer holds is resolved, with
 * `resolution` saying how things stand. `trigger`: set when the condition
 * holds and what the rule has not reported yet (after its mark) meets it by
 * itself; it counts only that, and carries the mark that covers it. So an
 * item (a DLQ entry, a failed or slow attempt, a quiet window) triggers a
 * rule at most once. Cooldown is not looked at here (claimTrigger does,
 * atomically).
 */
export interface Evaluation {
  holds: boolean;
  trigger: Trigger | null;
  resolution: Omit<Trigger, "mark"> | null;
}

const held = (trigger: Trigger | null): Evaluation => ({ holds: true, trigger, resolution: null });
const cleared = (resolution: Omit<Trigger, "mark">): Evaluation => ({ holds: false, trigger: null, resolution });

export async function evaluateRule(deps: Deps, rule: ActiveRule, now: Date): Promise<Evaluation> {
  const path = `/alert-rules/${rule.id}`;
  switch (rule.ruleType) {
    case "failure_rate": {
      const c = rule.config as ActiveRule<"failure_rate">["config"];
      const since = new Date(now.getTime() - c.window_minutes * MINUTE);
      const meets = (o: { succeeded: number; failed: number }) => {
        const attempts = o.succeeded + o.failed;
        const percent = attempts === 0 ? 0 : (o.failed / attempts) * 100;
        return { attempts, percent, ok: attempts > 0 && attempts >= c.min_attempts && percent >= c.threshold_percent };
      };
      const words = async (o: { succeeded: number; failed: number }) => {
        const { attempts, percent } = meets(o);
        return {
          reason: `${round1(percent)}% of deliveries${await scopeWords(deps, rule)} failed in the last ${minutes(c.window_minutes)} (${o.failed} of ${attempts}; threshold ${c.threshold_percent}%)`,
          data: { failure_percent: round1(percent), failed: o.failed, succeeded: o.succeeded, attempts, threshold_percent: c.threshold_percent, min_attempts: c.min_attempts, window_minutes: c.window_minutes },
        };
      };
      const all = await attemptOutcomes(deps, rule, since);
      if (!meets(all).ok) return cleared(resolved(await words(all), path));
      const fresh = await newAttemptOutcomes(deps, rule, since, rule.reportedUntil);
      if (!fresh.mark || !meets(fresh).ok) return held(null);
      return held({ ...(await words(fresh)), path, mark: fresh.mark });
    }
    case "latency": {
      const c = rule.config as ActiveRule<"latency">["config"];
      const since = new Date(now.getTime() - c.window_minutes * MINUTE);
      const words = async (m: { samples: number; valueMs: number | null }) => ({
        reason:
          m.valueMs === null
            ? `no timed deliveries${await scopeWords(deps, rule)} in the last ${minutes(c.window_minutes)} (threshold ${c.threshold_ms} ms)`
            : `p${c.percentile} delivery latency${await scopeWords(deps, rule)} was ${m.valueMs} ms over the last ${minutes(c.window_minutes)} (${plural(m.samples, "attempt")}; threshold ${c.threshold_ms} ms)`,
        data: { latency_ms: m.valueMs, percentile: c.percentile, threshold_ms: c.threshold_ms, samples: m.samples, window_minutes: c.window_minutes },
      });
      const all = await latencyPercentile(deps, rule, since, c.percentile);
      if (all.valueMs === null || all.valueMs < c.threshold_ms) return cleared(resolved(await words(all), path));
      const fresh = await newLatencyPercentile(deps, rule, since, c.percentile, rule.reportedUntil);
      if (!fresh.mark || fresh.valueMs === null || fresh.valueMs < c.threshold_ms) return held(null);
      return held({ ...(await words(fresh)), path, mark: fresh.mark });
    }
    case "dlq": {
      const c = rule.config as ActiveRule<"dlq">["config"];
      const since = new Date(now.getTime() - c.window_minutes * MINUTE);
      const all = await dlqArrivals(deps, rule, since);
      if (all < c.threshold) {
        return cleared(
          resolved(
            {
              reason: `${plural(all, "delivery", "deliveries")}${await scopeWords(deps, rule)} from the last ${minutes(c.window_minutes)} still in the dead-letter queue (threshold ${c.threshold})`,
              data: { dlq_count: all, threshold: c.threshold, window_minutes: c.window_minutes },
            },
            path,
          ),
        );
      }
      const fresh = await newDlqArrivals(deps, rule, since, rule.reportedUntil);
      if (!fresh.mark || fresh.count < c.threshold) return held(null);
      return held({
        reason: `${plural(fresh.count, "delivery", "deliveries")}${await scopeWords(deps, rule)} landed in the dead-letter queue in the last ${minutes(c.window_minutes)} (threshold ${c.threshold})`,
        data: { dlq_count: fresh.count, threshold: c.threshold, window_minutes: c.window_minutes },
        path,
        mark: fresh.mark,
      });
    }
    case "volume_drop": {
      const c = rule.config as ActiveRule<"volume_drop">["config"];
      const window = c.window_minutes * MINUTE;
      const since = new Date(now.getTime() - window);
      // A rule younger than its window has not watched a whole window yet: nothing has dropped.
      if (now.getTime() - Date.parse(rule.createdAt) < window) return { holds: false, trigger: null, resolution: null };
      const arrived = await eventsArrived(deps, rule, since);
      const words = async () => ({
        reason: `${arrived < c.min_events ? "Only " : ""}${plural(arrived, "event")} arrived${await scopeWords(deps, rule)} in the last ${minutes(c.window_minutes)} (expected at least ${c.min_events})`,
        data: { events: arrived, min_events: c.min_events, window_minutes: c.window_minutes },
      });
      if (arrived >= c.min_events) return cleared(resolved(await words(), path));
      // What a quiet window reports is the window itself: the next trigger needs a whole window after the last one reported.
      if (rule.reportedUntil && Date.parse(rule.reportedUntil.at) > since.getTime()) return held(null);
      return held({ ...(await words()), path, mark: { at: iso(now), id: null } });
    }
    case "issue_opened":
      return { holds: false, trigger: null, resolution: null };
  }
}

/** A resolution's words: how things stand now that the condition no longer holds. */
function resolved(w: { reason: string; data: Record<string, unknown> }, path: string): Omit<Trigger, "mark"> {
  return { reason: `Resolved: ${w.reason}`, data: w.data, path };
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

/**
 * How delivery outcomes become issues (docs/decisions.md D8), as pure data: the
 * recording transaction (src/domain/issues.ts) runs the steps this returns.
 * A leaf module: it imports nothing of ours.
 *
 * An issue is one failure class at one destination: `http_<status>`,
 * `timeout`, `connection_error` (an address the SSRF guard refused counts
 * here: nothing was reached) or `transform_error`. A success to the
 * destination resolves its unresolved issues.
 */

export type IssueClass = `http_${number}` | "timeout" | "connection_error" | "transform_error";

/** The class an attempt's error belongs to; null for failures that are no destination's fault (it was disabled or deleted). */
export function issueClassOf(error: string | null): IssueClass | null {
  if (!error) return null;
  if (/^http_\d{3}$/.test(error)) return error as IssueClass;
  if (error === "timeout" || error === "connection_error" || error === "transform_error") return error;
  if (error === "ssrf_blocked") return "connection_error";
  return null;
}

export const fingerprintOf = (destinationId: string, cls: IssueClass) => `${destinationId}:${cls}`;

export function issueTitle(cls: IssueClass): string {
  switch (cls) {
    case "timeout":
      return "Timeouts";
    case "connection_error":
      return "Connection errors";
    case "transform_error":
      return "Transform errors";
    default:
      return `HTTP ${cls.slice(5)} responses`;
  }
}

/** What issue bookkeeping needs of one recorded outcome; the delivery queue's outcomes are passed as they are. */
export interface IssueOutcome {
  attempt: { id: string; eventId: string; orgId: string; envId: string; destinationId: string };
  status: "success" | "failed";
  /** The failure class as stored on the attempt (http_503, timeout …). */
  error: string | null;
  errorDetail: string | null;
  responseStatus: number | null;
}

export type IssueStep =
  /** `count` failures of one class: open (or reopen) the issue, count them, keep the last one's details. */
  | { kind: "fail"; fingerprint: string; cls: IssueClass; count: number; last: IssueOutcome }
  /** A success: the destination's unresolved issues are resolved. */
  | { kind: "resolve"; destinationId: string };

/**
 * The fewest writes that leave issues as if each outcome had been applied in
 * turn: per destination, a run of failures becomes one step per class and a
 * run of successes one resolve. A healthy destination costs one resolve per
 * recorded batch (an index seek that finds nothing to change).
 */
export function issueSteps(outcomes: readonly IssueOutcome[]): IssueStep[] {
  const byDestination = new Map<string, IssueOutcome[]>();
  for (const o of outcomes) {
    const list = byDestination.get(o.attempt.destinationId);
    if (list) list.push(o);
    else byDestination.set(o.attempt.destinationId, [o]);
  }
  const steps: IssueStep[] = [];
  for (const [destinationId, list] of byDestination) {
    let failures = new Map<string, Extract<IssueStep, { kind: "fail" }>>();
    let resolvedLast = false;
    const flush = () => {
      for (const step of failures.values()) steps.push(step);
      if (failures.size > 0) resolvedLast = false;
      failures = new Map();
    };
    for (const o of list) {
      if (o.status === "success") {
        flush();
        if (!resolvedLast) steps.push({ kind: "resolve", destinationId });
        resolvedLast = true;
        continue;
      }
      const cls = issueClassOf(o.error);
      if (!cls) continue;
      const fingerprint = fingerprintOf(destinationId, cls);
      const step = failures.get(fingerprint);
      if (step) {
        step.count++;
        step.last = o;
      } else failures.set(fingerprint, { kind: "fail", fingerprint, cls, count: 1, last: o });
    }
    flush();
  }
  return steps;
}

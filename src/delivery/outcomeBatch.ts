import type { Deps } from "../domain/deps";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { recordOutcomes, type AttemptOutcome } from "./outcomes";
import { releaseClaims, type AttemptRow } from "./queue";
import type { HeadClaim } from "../db/orderingLanes";

export interface OutcomeBatchOptions {
  logger: Logger;
  metrics?: Metrics;
  /** Told which replay jobs had a delivery settle, after it is recorded. */
  onJobsSettled?: (jobIds: string[]) => void;
  /** A destination these outcomes disabled: a copy cached as active must not send its queued rows. */
  forgetDestination: (destinationId: string) => void;
}

/**
 * The delivery worker's finished deliveries waiting for the pump's commit:
 * outcomes to record and rows to hand back, written together inside the
 * pump's write transaction; the bus messages, job notices and logs they call
 * for go out once it has committed.
 */
export class OutcomeBatch {
  private outcomes: AttemptOutcome[] = [];
  private releases: AttemptRow[] = [];

  constructor(
    private readonly deps: Pick<Deps, "db" | "clock" | "bus" | "settings">,
    private readonly opts: OutcomeBatchOptions,
  ) {}

  /** A finished delivery's outcome, recorded (and counted in the metrics) by the next pump. */
  finish(outcome: AttemptOutcome) {
    this.outcomes.push(outcome);
  }

  /**
   * The batch's outcomes into the counters: one increment per label and
   * counter for the batch, not three calls a delivery (a label lookup each,
   * a few µs of the one thread per delivery in a drain's profile).
   */
  private count(batch: readonly AttemptOutcome[]) {
    const metrics = this.opts.metrics;
    if (!metrics || batch.length === 0) return;
    const byOutcome = new Map<string, number>();
    let retries = 0;
    let dlq = 0;
    for (const o of batch) {
      const label = o.status === "success" ? "success" : outcomeLabel(o.error);
      byOutcome.set(label, (byOutcome.get(label) ?? 0) + 1);
      if (o.retryAt) retries++;
      if (o.dlq) dlq++;
    }
    for (const [outcome, n] of byOutcome) metrics.deliveries.inc({ outcome }, n);
    if (retries > 0) metrics.retriesScheduled.inc(retries);
    if (dlq > 0) metrics.deadLettered.inc(dlq);
  }

  /** A claimed row that goes back to the queue unsent. */
  handBack(row: AttemptRow) {
    this.releases.push(row);
  }

  /** Outcomes and hand-backs not written yet. */
  waiting(): number {
    return this.outcomes.length + this.releases.length;
  }

  /**
   * Writes finished outcomes and hand-backs; inside the caller's write
   * transaction. `dueAgain` is told when rows it wrote are due again (handed
   * back, or a next try queued). With `claimNext`, the next rows of ordered
   * lines whose heads settled are claimed for the caller and returned in
   * `claimed` (to start once committed). Returns, besides, what to announce
   * once it has committed.
   */
  async record(dueAgain: () => void, claimNext?: HeadClaim): Promise<{ announce: () => void; claimed: AttemptRow[] }> {
    const { db, clock, bus } = this.deps;
    const batch = this.outcomes;
    const handBack = this.releases;
    this.outcomes = [];
    this.releases = [];
    if (handBack.length > 0) {
      await releaseClaims(db, handBack);
      // A handed-back row is due again: the next pump claims it (or its destination's next slot does).
      dueAgain();
    }
    if (batch.length === 0) return { announce: () => {}, claimed: [] };
    this.count(batch);
    const recorded = await recordOutcomes(db, batch, clock.now(), { endpointDisableAfterMs: this.deps.settings.endpointDisableAfterMs, claimNext });
    // A next try is due again soon: this pump's claim (after this, in the same transaction) looks, and if it
    // is not due yet, the pump's timer is set for it.
    if (recorded.retriesQueued > 0 || recorded.promoted > 0) dueAgain();
    // Disabled by this very transaction: their queued rows must not go out on a copy cached as active.
    for (const id of recorded.disabledDestinations) this.opts.forgetDestination(id);
    const announce = () => {
      for (const e of recorded.changedEvents) bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
      for (const i of recorded.openedIssues) bus.publish({ type: "issue.opened", orgId: i.orgId, envId: i.envId, issueId: i.id });
      for (const d of recorded.dlqScopes) bus.publish({ type: "delivery.dlq", orgId: d.orgId, envId: d.envId });
      if (recorded.settledJobIds.length > 0) this.opts.onJobsSettled?.(recorded.settledJobIds);
      if (recorded.stale > 0) this.opts.logger.warn("delivery outcomes arrived after their lease was lost", { count: recorded.stale });
      for (const o of recorded.failures) logFailure(this.opts.logger, o);
    };
    return { announce, claimed: recorded.claimedHeads };
  }
}

/** A failed delivery is worth an operator's attention: at warn, with what they need to find it. */
function logFailure(logger: Logger, o: AttemptOutcome) {
  const a = o.attempt;
  const fields = {
    attempt_id: a.id,
    event_id: a.eventId,
    destination_id: a.destinationId,
    connection_id: a.connectionId,
    attempt_number: a.attemptNumber,
    trigger_type: a.triggerType,
    error: o.error,
    error_detail: o.errorDetail,
    response_status: o.responseStatus,
    // The attempt's span, given here: the delivery path keeps no active span for the logger to find.
    ...o.trace,
  };
  if (o.dlq) logger.warn("delivery failed and moved to the DLQ", fields);
  else if (o.retryAt) logger.warn("delivery failed; retrying", { ...fields, next_retry_at: o.retryAt.toISOString() });
  else logger.warn("delivery failed", fields);
}

/**
 * Bounded label values for hookrelay_deliveries_total{outcome}: success,
 * http_error, timeout, connection_error, transform_error, ssrf_blocked,
 * destination_disabled, destination_not_found, endpoint_expired, connection_deleted.
 */
function outcomeLabel(error: string | null): string {
  if (!error) return "failed";
  return error.startsWith("http_") ? "http_error" : error;
}

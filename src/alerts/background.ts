import type { Gauge } from "prom-client";
import { PERIODIC_RULE_TYPES } from "../contracts/alertRules";
import { sourceOfEvent } from "../domain/alertMeasurements";
import { claimResolution, claimTrigger, coolingDown, enabledRules, pruneAlertHistory, type ActiveRule } from "../domain/activeAlertRules";
import { iso } from "../core/clock";
import { countOpenIssues, loadIssues } from "../domain/issues";
import { whileScheduler } from "../cluster/schedulerLease";
import type { BackgroundContext } from "../runtime/context";
import { every, type BackgroundTask } from "../core/tasks";
import { wakeable } from "../core/wakeable";
import { dispatchAlert, RETRY_DELAYS_MS, type Notice } from "./dispatch";
import { evaluateRule, issueTrigger, type Trigger } from "./evaluate";
import { errorMessage } from "../contracts/errors";
import { inSpan } from "../observability/traceContext";

export interface AlertWorkOptions {
  /** Pauses between tries of a failed notification (default RETRY_DELAYS_MS). */
  retryDelaysMs?: readonly number[];
}

/**
 * The alert task: evaluates rules and sends notifications, off the ingest
 * and delivery hot paths. It runs
 * - every HOOKRELAY_ALERT_INTERVAL_SECONDS: every enabled periodic rule
 *   (failure_rate, latency, dlq, volume_drop), and when rules change;
 * - when woken by the bus: `issue.opened` fires issue_opened rules and
 *   `delivery.dlq` checks the environment's dlq rules at once. The delivery
 *   worker publishes both after the commit that recorded the outcomes.
 * Across nodes: the periodic pass runs on the cluster's scheduler only; the
 * bus-woken checks run on the node whose worker recorded the outcome, and
 * claimTrigger (a compare-and-set) keeps two nodes from firing one rule twice.
 * Windows and cooldowns read the injected clock. Sends run beside the
 * evaluation (a slow channel holds up no rule) and are awaited on stop.
 */
export function startAlertWork(ctx: BackgroundContext, opts: AlertWorkOptions = {}): BackgroundTask[] {
  const { deps, config, logger, metrics } = ctx;
  const intervalMs = config.alertIntervalSeconds * 1000;
  const stopping = new AbortController();
  const dispatches = new Set<Promise<unknown>>();
  const openedIssues = new Set<string>();
  const dlqScopes = new Map<string, { orgId: string; envId: string }>();
  let fullPass = true;

  /** Sends and records in the background: a slow channel holds up no evaluation. */
  function send(rule: ActiveRule, notice: Notice, now: Date) {
    const sending: Promise<unknown> = inSpan(ctx.tracer, undefined, "alert.notify", () => dispatchAlert(deps, rule, notice, now, { logger, metrics, retryDelaysMs: opts.retryDelaysMs ?? RETRY_DELAYS_MS, signal: stopping.signal }), { "hookrelay.alert_rule.id": rule.id, "hookrelay.alert.status": notice.status })
      .catch((err) => logger.error("recording an alert failed", { alert_rule_id: rule.id, error: errorMessage(err) }))
      .finally(() => dispatches.delete(sending));
    dispatches.add(sending);
  }

  /** Fires the rule if it is out of cooldown and nobody fired it meanwhile (a periodic rule's trigger also moves its mark). */
  async function fire(rule: ActiveRule, trigger: Trigger, now: Date) {
    if (!(await claimTrigger(deps, rule, now, trigger.mark))) return;
    metrics.alertsFired.inc({ rule_type: rule.ruleType });
    logger.info("alert fired", { alert_rule_id: rule.id, rule_type: rule.ruleType, reason: trigger.reason });
    send(rule, { ...trigger, status: "triggered" }, now);
  }

  /** A firing rule whose condition cleared: one resolved notification to the same channels, whatever the cooldown. */
  async function resolve(rule: ActiveRule, resolution: Omit<Trigger, "mark">, now: Date) {
    const since = await claimResolution(deps, rule);
    if (since === null) return;
    logger.info("alert resolved", { alert_rule_id: rule.id, rule_type: rule.ruleType, reason: resolution.reason });
    send(rule, { ...resolution, data: { ...resolution.data, firing_since: since }, status: "resolved", firingSince: since }, now);
  }

  async function evaluate(rules: ActiveRule[], now: Date) {
    for (const rule of rules) {
      // Not firing and cooling down: it can neither fire nor resolve now.
      if (rule.firingSince === null && coolingDown(rule, now)) continue;
      try {
        const { holds, trigger, resolution } = await inSpan(ctx.tracer, undefined, "alert.evaluate", () => evaluateRule(deps, rule, now), { "hookrelay.alert_rule.id": rule.id, "hookrelay.alert_rule.type": rule.ruleType });
        if (!holds && resolution && rule.firingSince !== null) await resolve(rule, resolution, now);
        else if (trigger) await fire(rule, trigger, now);
      } catch (err) {
        // One rule's trouble (its source deleted meanwhile, say) does not keep the others from being evaluated.
        logger.error("alert rule evaluation failed", { alert_rule_id: rule.id, error: errorMessage(err) });
      }
    }
  }

  async function issuesOpened(ids: string[], now: Date) {
    const issues = await loadIssues(deps, ids);
    const rulesByScope = new Map<string, Promise<ActiveRule[]>>();
    for (const issue of issues) {
      // A snoozed issue reopening is expected: it wakes nobody until the snooze ends.
      if (issue.snoozed_until && Date.parse(issue.snoozed_until) > now.getTime()) continue;
      if (issue.status !== "open") continue;
      const key = `${issue.org_id} ${issue.env_id}`;
      if (!rulesByScope.has(key)) rulesByScope.set(key, enabledRules(deps, ["issue_opened"], { orgId: issue.org_id, envId: issue.env_id }));
      const rules = await rulesByScope.get(key)!;
      let source: string | null | undefined;
      for (const rule of rules) {
        if (rule.destinationId && rule.destinationId !== issue.destination_id) continue;
        if (rule.sourceId) {
          source ??= await sourceOfEvent(deps, issue.last_event_id);
          if (rule.sourceId !== source) continue;
        }
        await fire(rule, issueTrigger(issue), now);
      }
    }
  }

  const task = wakeable(
    "alerts",
    async () => {
      const now = deps.clock.now();
      const ids = [...openedIssues];
      openedIssues.clear();
      const scopes = [...dlqScopes.values()];
      dlqScopes.clear();
      const full = fullPass && ctx.lease.held();
      fullPass = false;
      if (ids.length > 0) await issuesOpened(ids, now);
      if (full) {
        await evaluate(await enabledRules(deps, PERIODIC_RULE_TYPES), now);
        deps.bus.publish({ type: "alerts.evaluated", at: iso(now) });
      } else for (const scope of scopes) await evaluate(await enabledRules(deps, ["dlq"], scope), now);
      return false;
    },
    { pollMs: intervalMs, logger },
  );

  const unsubscribe = deps.bus.subscribe((m) => {
    switch (m.type) {
      case "issue.opened":
        openedIssues.add(m.issueId);
        break;
      case "delivery.dlq":
        dlqScopes.set(`${m.orgId} ${m.envId}`, { orgId: m.orgId, envId: m.envId });
        break;
      case "alerts.evaluate":
        fullPass = true;
        break;
      default:
        return;
    }
    task.wake();
  });
  // The timer, not the task's idle poll, sets the pace: wakes in between do not push the next full pass back.
  const interval = setInterval(() => {
    fullPass = true;
    task.wake();
  }, intervalMs);
  interval.unref?.();

  collectOnScrape(metrics.openIssues, () => countOpenIssues(deps));
  const pruning = whileScheduler(ctx.lease, "alert-history-retention", () => [every("alert-history-retention", 3600_000, () => pruneAlertHistory(deps), logger)]);
  // A node that becomes the scheduler evaluates every rule at once rather than an interval later.
  const unwatch = ctx.lease.watch((held) => {
    if (!held) return;
    fullPass = true;
    task.wake();
  });

  return [
    {
      name: "alerts",
      running: () => task.running(),
      async stop() {
        unsubscribe();
        unwatch();
        clearInterval(interval);
        await Promise.all([task.stop(), pruning.stop()]);
        // Sends under way finish (each has its timeout); their retries are not waited for.
        stopping.abort();
        while (dispatches.size > 0) await Promise.allSettled([...dispatches]);
      },
    },
  ];
}

/** prom-client calls a gauge's `collect` before every scrape. */
function collectOnScrape(gauge: Gauge, read: () => Promise<number>) {
  (gauge as unknown as { collect: () => Promise<void> }).collect = async () => {
    try {
      gauge.set(await read());
    } catch {
      // The database may be closing; keep the last value.
    }
  };
}

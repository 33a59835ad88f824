import { eq } from "drizzle-orm";
import { liveNodes } from "../cluster/nodes";
import { HEARTBEAT_INTERVAL_MS } from "../core/node";
import { dialectOf } from "../db/dialect";
import type { ClaimedEvent } from "../db/deliverySql";
import { connections, sources } from "../db/schema";
import type { Deps } from "../domain/deps";
import { deliveryDestinationFromRow, type DeliveryDestination } from "../domain/destinationDelivery";
import { endpointDeliveryFrom, type EndpointDelivery } from "../domain/endpointDelivery";
import { idPrefix } from "../contracts/ids";
import { secretRequestHeaders } from "../contracts/sources";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import type { BackgroundTask } from "../core/tasks";
import { eventView } from "../rules/eventView";
import { inWriteTurn } from "../db/writeTurn";
import {
  claimBatch,
  destinationForDelivery,
  loadClaimedEvents,
  nextDueAt,
  recordOutcomes,
  releaseClaims,
  releaseOrphanedClaims,
  type AttemptOutcome,
  type AttemptRow,
} from "./queue";
import { DestinationPacer } from "./rateLimiter";
import { decideRetry } from "./retryPolicy";
import { buildRequest, send, storedRequestHeaders, storedRequestUrl, type SendTarget } from "../outgoing/sender";
import { applyTransform, DEFAULT_TRANSFORM_TIMEOUT_MS, TransformError } from "../rules/transform";
import { TtlCache } from "./ttlCache";
import { errorMessage } from "../contracts/errors";

/**
 * The delivery worker pool: up to `concurrency` requests in flight at once.
 *
 * The pump claims due rows ahead into a ready list, so the rows a slot
 * starts next are already claimed and loaded: a finished delivery starts the
 * next ready row at once, and no claim, event read or commit sits between one
 * request and the next. The pump records every outcome that finished since it
 * last ran and, when the ready list runs low, claims the next batch, in one
 * write transaction (group commit): the turn's, which ingest's group commit
 * shares (src/db/writeTurn.ts). While enough rows are ready, outcomes are
 * recorded a few milliseconds later in bigger batches: claiming, recording
 * and committing cost less per row in a bigger transaction (a commit writes
 * the pages its rows share once), which is most of a delivery's CPU when
 * a backlog drains (docs/performance.md, sixth round). Rows claimed and not
 * yet recorded (sending, awaiting their record, ready) never exceed
 * HELD_PER_SLOT times the concurrency; only those sent and not yet recorded
 * can be delivered twice after a crash.
 * It is woken by the bus (`delivery.queued`), by finished deliveries, by a
 * timer set for the next scheduled retry or rate-limit slot, and by a slow
 * safety poll; never by a tight loop.
 */
export interface DeliveryWorkerOptions {
  concurrency: number;
  logger: Logger;
  metrics?: Metrics;
  /** Safety poll: catches rows queued by another process (CLI local mode). */
  pollMs?: number;
  /** How long edits to a destination or connection may take to reach deliveries. */
  cacheMs?: number;
  /** A wake from the bus claims this much later, so a burst of wakes becomes one claim over a batch. */
  coalesceMs?: number;
  /** Told which replay jobs had a delivery settle, after it is recorded. */
  onJobsSettled?: (jobIds: string[]) => void;
}

export interface DeliveryWorker extends BackgroundTask {
  wake(): void;
  /** Deliveries in flight now. */
  active(): number;
}

/** A claimed row and its event (null when retention pruned the event meanwhile). */
interface Claimed {
  row: AttemptRow;
  event: ClaimedEvent | null;
  /** Date.now() at the claim, which read the destination's status from the database. */
  claimedAt: number;
}

/**
 * Rows a worker holds per sending slot: one sending, its share of a ready
 * list that keeps every slot busy through a pump, and of outcomes that wait
 * for a bigger commit.
 */
export const HELD_PER_SLOT = 4;
/** How long a finished delivery's outcome may wait for others to share its commit, while the ready list is full. */
const RECORD_COALESCE_MS = 2;

type ConnectionTransform = { transformEnabled: number; transformExpression: string | null } | null;
/** A destination, and when an application endpoint delivers through it, the endpoint's own settings, loaded together. */
type DeliveryTarget = DeliveryDestination & { endpoint: EndpointDelivery | null };
/** Outbound sending can give every delivery its own destination (one per endpoint): room for that many. */
const DESTINATIONS_CACHED = 100_000;

export function startDeliveryWorker(deps: Deps, opts: DeliveryWorkerOptions): DeliveryWorker {
  const { db, clock } = deps;
  const logger = opts.logger;
  const pollMs = opts.pollMs ?? 5000;
  /** Rows held at most (in flight, awaiting their record, and ready). */
  const readyTarget = opts.concurrency * HELD_PER_SLOT;
  const pacer = new DestinationPacer();
  // Rates are the cluster's: with several nodes on PostgreSQL each sends its share (rateLimiter.ts).
  const sharing = dialectOf(db) === "postgres" ? shareRatesAmongLiveNodes(deps, pacer, logger) : null;
  const destinationsCache = new TtlCache<DeliveryTarget | null>(
    opts.cacheMs ?? 1000,
    async (id) => {
      const row = await destinationForDelivery(db, id);
      if (!row) return null;
      const endpoint =
        row.applicationId && row.endpointId
          ? endpointDeliveryFrom(
              {
                applicationId: row.applicationId,
                expiresAt: row.endpointExpiresAt,
                previousSecret: row.previousSecret,
                previousUntil: row.previousUntil,
                current: row.signingSecret,
                rateLimit: row.applicationRateLimit,
                portalHeld: row.portalHeld,
                allowPrivateEndpoints: row.allowPrivateEndpoints,
              },
              deps.secrets,
              deps.settings.blockPrivateDestinations,
            )
          : null;
      // The current and the previous secret come from one read: a rotation is never seen half done.
      return { ...deliveryDestinationFromRow(row, deps.secrets), endpoint };
    },
    DESTINATIONS_CACHED,
  );
  const transformsCache = new TtlCache<ConnectionTransform>(opts.cacheMs ?? 1000, async (id) => {
    const [row] = await db
      .select({ transformEnabled: connections.transformEnabled, transformExpression: connections.transformExpression })
      .from(connections)
      .where(eq(connections.id, id))
      .limit(1);
    return row ?? null;
  });
  /**
   * A source's own signature header, dropped from a transformed delivery,
   * and the headers holding its secret (a token source's), never forwarded.
   */
  const signatureHeaders = new TtlCache<{ signature: string | null; secret: string[] }>(opts.cacheMs ?? 1000, async (id) => {
    const [row] = await db.select({ header: sources.verificationHeader, type: sources.verificationType }).from(sources).where(eq(sources.id, id)).limit(1);
    return { signature: row?.header ?? null, secret: secretRequestHeaders(row?.type ?? null, row?.header ?? null) };
  });

  // An edit on any node (the bus carries it across nodes) reaches the next delivery, not one a cache lifetime later.
  const unsubscribe = deps.bus.subscribe((m) => {
    switch (m.type) {
      case "destination.updated":
        destinationsCache.forget(m.destinationId);
        break;
      case "connection.updated":
        transformsCache.forget(m.connectionId);
        break;
      case "source.updated":
        signatureHeaders.forget(m.sourceId);
        break;
      case "bus.resumed":
        destinationsCache.clear();
        transformsCache.clear();
        signatureHeaders.clear();
        break;
    }
  });

  let stopped = false;
  let active = 0;
  const inFlight = new Set<Promise<void>>();
  /** Claimed and loaded, waiting for a free slot. */
  let ready: Claimed[] = [];
  /** The last claim found less than it asked for: claim again only when woken or when the timer fires. */
  let drained = false;
  let outcomes: AttemptOutcome[] = [];
  let releases: AttemptRow[] = [];
  let pumping = false;
  /** The pump running now (while `pumping`): stop() awaits it. */
  let pumpRun: Promise<void> = Promise.resolve();
  let pumpAgain = false;
  let pumpTimer: ReturnType<typeof setTimeout> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  // A previous run of this process may have died mid-delivery: those rows are due again.
  // The first pump waits for this, so nothing is claimed before it.
  const orphansRequeued = releaseOrphanedClaims(db, clock.now()).then(
    (n) => void (n > 0 && logger.info("re-queued deliveries interrupted by the last shutdown", { count: n })),
    (err) => logger.error("re-queueing interrupted deliveries failed", { error: errorMessage(err) }),
  );

  function schedulePump(delayMs = 0) {
    if (stopped && active === 0 && outcomes.length === 0 && releases.length === 0 && ready.length === 0) return;
    if (delayMs > 0) {
      pumpTimer ??= setTimeout(() => {
        pumpTimer = null;
        schedulePump();
      }, delayMs);
      return;
    }
    if (pumpTimer) clearTimeout(pumpTimer);
    pumpTimer = null;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    // At once: the pump's writes wait for the turn's write transaction anyway, which they share with ingest.
    pumpRun = pump();
  }

  function armTimer(at: number) {
    if (timer) clearTimeout(timer);
    if (stopped) return;
    const delay = Math.min(Math.max(at - clock.now().getTime(), 10), pollMs);
    timer = setTimeout(() => {
      timer = null;
      drained = false;
      schedulePump();
    }, delay);
    timer.unref?.();
  }

  async function pump() {
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      await orphansRequeued;
      do {
        pumpAgain = false;
        if (stopped) {
          // Rows claimed but never started go back to the queue.
          for (const c of ready) releases.push(c.row);
          ready = [];
        }
        // One write transaction records what finished and claims what comes next: the turn's, shared with ingest.
        let afterCommit: () => void = () => {};
        let want = 0;
        const claim = await inWriteTurn(db, async () => {
          afterCommit = await recordFinished();
          // Claims come in batches: once the ready list runs low, enough to hold HELD_PER_SLOT rows a slot again.
          want = stopped || drained || ready.length >= opts.concurrency ? 0 : readyTarget - held() - ready.length;
          if (want === 0) return { rows: [], complete: true };
          const now = clock.now();
          return claimBatch(db, { now, limit: want, claimedBy: deps.node.id, exclude: pacer.blocked(now.getTime()), oneEach: pacer.rateLimited() });
        });
        afterCommit();
        const rows = claim.rows;
        if (want > 0 && rows.length < want) {
          // A claim that stopped part way round the destinations with rows waiting goes on in the next turn;
          // one that saw every due row it could take has drained what is due.
          if (claim.complete) drained = true;
          else pumpAgain = true;
        }
        if (rows.length > 0) {
          const claimedEvents = await loadClaimedEvents(db, rows);
          const eventById = new Map(claimedEvents.map((e) => [e.id, e]));
          const claimedAt = Date.now();
          // An event missing here was pruned by retention meanwhile: its attempts went with it (foreign key cascade).
          for (const row of rows) ready.push({ row, event: eventById.get(row.eventId) ?? null, claimedAt });
        }
        fill();
        if (stopped) break;
        if (drained && ready.length === 0) {
          // Drained what is due: sleep until the next scheduled row or rate-limit slot.
          const next = await nextDueAt(db, clock.now());
          const unblock = pacer.nextUnblockAt(clock.now().getTime());
          const candidates = [next?.getTime(), unblock ?? undefined, clock.now().getTime() + pollMs].filter((t): t is number => t !== undefined);
          armTimer(Math.min(...candidates));
        }
      } while (pumpAgain && !stopped);
    } catch (err) {
      // Outcomes in that transaction are lost with it: their rows stay `delivering` and are
      // delivered again once their lease runs out or after a restart (at least once).
      logger.error("delivery pump failed", { error: errorMessage(err) });
      armTimer(clock.now().getTime() + 1000);
    } finally {
      pumping = false;
    }
    if (pumpAgain) schedulePump();
  }

  /** Starts ready rows while sending slots are free. */
  function fill() {
    while (active < opts.concurrency && ready.length > 0 && !stopped) start(ready.shift()!);
  }

  /** Claimed rows that are sending or whose outcome awaits its record (with the ready list, at most readyTarget). */
  function held(): number {
    return active + outcomes.length + releases.length;
  }

  function start({ row, event, claimedAt }: Claimed) {
    active++;
    const p: Promise<void> = deliver(row, event, claimedAt)
      .catch((err) => {
        // Unexpected (a bug or the database going away): hand the row back rather than lose it.
        logger.error("delivery failed unexpectedly", { attempt_id: row.id, error: errorMessage(err) });
        releases.push(row);
      })
      .finally(() => {
        active--;
        inFlight.delete(p);
        // The next ready row starts now, not after the outcome's commit: the receiver and the HTTP
        // client thread keep working while the pump writes (docs/performance.md, fourth round).
        fill();
        // Record at once when rows are needed or many outcomes wait; else let a few more join the commit.
        const recordNow = ready.length < opts.concurrency || outcomes.length + releases.length >= opts.concurrency * 2;
        schedulePump(recordNow ? 0 : RECORD_COALESCE_MS);
      });
    inFlight.add(p);
  }

  /**
   * Writes finished outcomes and hand-backs; inside the caller's write
   * transaction. Returns what to announce once it has committed.
   */
  async function recordFinished(): Promise<() => void> {
    const batch = outcomes;
    const handBack = releases;
    outcomes = [];
    releases = [];
    if (handBack.length > 0) {
      await releaseClaims(db, handBack);
      // A handed-back row is due again: the next pump claims it (or its destination's next slot does).
      drained = false;
    }
    if (batch.length === 0) return () => {};
    const recorded = await recordOutcomes(db, batch, clock.now(), { endpointDisableAfterMs: deps.settings.endpointDisableAfterMs });
    // A next try is due again soon: this pump's claim (after this, in the same transaction) looks, and if it
    // is not due yet, the pump's timer is set for it.
    if (recorded.retriesQueued > 0) drained = false;
    // Disabled by this very transaction: their queued rows must not go out on a copy cached as active.
    for (const id of recorded.disabledDestinations) destinationsCache.forget(id);
    return () => {
      for (const e of recorded.changedEvents) deps.bus.publish({ type: "event.updated", orgId: e.orgId, envId: e.envId, eventId: e.id, sourceId: e.sourceId });
      for (const i of recorded.openedIssues) deps.bus.publish({ type: "issue.opened", orgId: i.orgId, envId: i.envId, issueId: i.id });
      for (const d of recorded.dlqScopes) deps.bus.publish({ type: "delivery.dlq", orgId: d.orgId, envId: d.envId });
      if (recorded.settledJobIds.length > 0) opts.onJobsSettled?.(recorded.settledJobIds);
      if (recorded.stale > 0) logger.warn("delivery outcomes arrived after their lease was lost", { count: recorded.stale });
      for (const o of recorded.failures) logFailure(o);
    };
  }

  /** A failed delivery is worth an operator's attention: at warn, with what they need to find it. */
  function logFailure(o: AttemptOutcome) {
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
    };
    if (o.dlq) logger.warn("delivery failed and moved to the DLQ", fields);
    else if (o.retryAt) logger.warn("delivery failed; retrying", { ...fields, next_retry_at: o.retryAt.toISOString() });
    else logger.warn("delivery failed", fields);
  }

  async function deliver(row: AttemptRow, event: ClaimedEvent | null, claimedAt: number): Promise<void> {
    // Pruned with its attempts (this row included) meanwhile: nothing to send or record, and no rate-limit slot to spend.
    if (!event) return;
    let destination = await destinationsCache.get(row.destinationId);
    // The claim found the destination not paused in the database: a cached `paused` loaded before it is stale
    // (resumed since), and handing the row back would only have the next pump claim it again until the entry expires.
    if (destination?.status === "paused") destination = await destinationsCache.get(row.destinationId, { loadedSince: claimedAt });
    if (!destination) return finish(terminal(row, clock.now(), "destination_not_found", "the destination was deleted"));
    if (destination.status === "paused" || stopped) return void releases.push(row);
    if (destination.status === "disabled") return finish(terminal(row, clock.now(), "destination_disabled", "the destination is disabled"));
    // An application endpoint (docs/outbound.md): deleted meanwhile, or past its expires_at, it receives nothing.
    const endpoint = destination.endpoint;
    if (destination.applicationId && !endpoint) return finish(terminal(row, clock.now(), "destination_not_found", "the endpoint was deleted"));
    if (endpoint?.expiresAt && Date.parse(endpoint.expiresAt) <= clock.now().getTime()) {
      return finish(terminal(row, clock.now(), "endpoint_expired", `the endpoint expired at ${endpoint.expiresAt}`));
    }
    // Deleted while this row waited (a retry the delete did not see, asked for by a delivery then in flight):
    // cancelled as the delete cancels the others (src/domain/connections.ts). A replay only borrows the
    // connection's transform and goes to the destination regardless.
    const connection = row.connectionId ? await transformsCache.get(row.connectionId) : null;
    if (row.connectionId && !connection && row.triggerType !== "replay") {
      return finish({ ...terminal(row, clock.now(), "connection_deleted", "the connection was deleted before this delivery was sent"), dlq: false });
    }
    const group = endpoint?.applicationRateLimit ? { key: `application:${endpoint.applicationId}`, ratePerSecond: endpoint.applicationRateLimit } : undefined;
    if (!pacer.tryTake(destination.id, destination.rateLimitPerSecond, clock.now().getTime(), group)) return void releases.push(row);

    const [signingSecret, ...extraSigningSecrets] = endpoint ? endpoint.signingSecrets(clock.now()) : [destination.signingSecret];
    const target: SendTarget = {
      url: destination.url,
      httpMethod: destination.httpMethod,
      headers: destination.headers,
      auth: destination.auth,
      timeoutMs: destination.timeoutMs,
      signingSecret: signingSecret!,
      extraSigningSecrets,
    };
    let transformed: { value: unknown } | undefined;
    let sourceSignatureHeader: string | null = null;
    if (connection?.transformEnabled === 1 && connection.transformExpression) {
      const view = eventView(event);
      try {
        transformed = { value: await applyTransform(connection.transformExpression, view, { timeoutMs: DEFAULT_TRANSFORM_TIMEOUT_MS }) };
      } catch (err) {
        if (!(err instanceof TransformError)) throw err;
        return finish(terminal(row, clock.now(), "transform_error", err.message, { url: destination.url, method: destination.httpMethod }));
      }
    }
    // An outbound message's source is the application's: it received no request, so no header holds a secret.
    const sourceHeaders = endpoint ? null : await signatureHeaders.get(event.sourceId);
    if (transformed) sourceSignatureHeader = sourceHeaders?.signature ?? null;

    // The attempt's sent_at, and the signature's timestamp: the request starts now.
    const sentAt = clock.now();
    // A message's event is `evt_<message id>`: receivers see the message id as webhook-id.
    const messageId = endpoint ? event.id.slice(idPrefix.event.length) : undefined;
    const request = buildRequest({
      target,
      event: { id: event.id, sourceId: event.sourceId, headers: JSON.parse(event.headers) as Record<string, unknown>, body: event.body, messageId },
      transformed,
      sourceSignatureHeader,
      sourceSecretHeaders: sourceHeaders?.secret,
      attemptNumber: row.attemptNumber ?? 1,
      now: sentAt,
    });
    // An endpoint a portal link set is held to the private-address block, checked again at each send (DNS may have changed).
    const blockPrivate = endpoint ? endpoint.blockPrivate : deps.settings.blockPrivateDestinations;
    const result = await send(request, { timeoutMs: destination.timeoutMs, blockPrivate });
    if (result.responseStatus !== null || result.error === "timeout") opts.metrics?.deliveryDuration.observe(result.durationMs / 1000);

    const now = clock.now();
    const decision = result.ok
      ? ({ retry: false } as const)
      : decideRetry({
          settings: destination,
          attemptNumber: row.attemptNumber ?? 1,
          retryable: result.retryable,
          noRetry: row.noRetry === 1,
          responseStatus: result.responseStatus,
          retryAfter: result.retryAfter,
          now,
        });
    finish({
      attempt: row,
      status: result.ok ? "success" : "failed",
      requestUrl: storedRequestUrl(request, target),
      requestMethod: request.method,
      requestHeaders: JSON.stringify(storedRequestHeaders(request)),
      requestBodySize: request.body?.byteLength ?? 0,
      responseStatus: result.responseStatus,
      responseHeaders: result.responseHeaders ? JSON.stringify(result.responseHeaders) : null,
      responseBody: result.responseBody,
      durationMs: result.durationMs,
      sentAt,
      error: result.error,
      errorDetail: result.errorDetail,
      retryAt: decision.retry ? new Date(now.getTime() + decision.delayMs) : null,
      dlq: !result.ok && !decision.retry && row.noRetry !== 1,
    });
  }

  function finish(outcome: AttemptOutcome) {
    opts.metrics?.deliveries.inc({ outcome: outcome.status === "success" ? "success" : outcomeLabel(outcome.error) });
    outcomes.push(outcome);
  }

  const task: DeliveryWorker = {
    name: "delivery-worker",
    running: () => !stopped,
    wake: () => {
      drained = false;
      schedulePump(opts.coalesceMs ?? 0);
    },
    active: () => active,
    async stop() {
      stopped = true;
      unsubscribe();
      if (sharing) clearInterval(sharing);
      if (timer) clearTimeout(timer);
      if (pumpTimer) clearTimeout(pumpTimer);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      // A pump that ends with more to do starts the next one itself: wait for the last.
      while (pumping) await pumpRun;
      for (const c of ready) releases.push(c.row);
      ready = [];
      try {
        (await inWriteTurn(db, recordFinished))();
      } catch (err) {
        logger.error("recording the last delivery outcomes failed; they are delivered again after the restart", { error: errorMessage(err) });
      }
    },
  };
  schedulePump();
  return task;
}

/**
 * Counts the live nodes now and every heartbeat interval, and has the pacer
 * send 1/n of each rate: n nodes together hold the destination's and the
 * application's limit. A node that joins or dies changes the share within
 * one interval (plus NODE_TIMEOUT_MS for a death).
 */
function shareRatesAmongLiveNodes(deps: Deps, pacer: DestinationPacer, logger: Logger): ReturnType<typeof setInterval> {
  const refresh = () =>
    liveNodes(deps.db, deps.clock.now()).then(
      (nodes) => pacer.shareAmong(nodes.length),
      (error) => logger.warn("counting the live nodes failed; rate limits keep the last share", { error: errorMessage(error) }),
    );
  void refresh();
  const timer = setInterval(refresh, HEARTBEAT_INTERVAL_MS);
  timer.unref?.();
  return timer;
}

/** A failure that no retry can fix: the chain ends here, in the DLQ unless it is a replay. */
function terminal(row: AttemptRow, attemptedAt: Date, error: string, detail: string, target?: { url: string; method: string }): AttemptOutcome {
  return {
    attempt: row,
    status: "failed",
    requestUrl: target?.url ?? row.requestUrl,
    requestMethod: target?.method ?? row.requestMethod,
    requestHeaders: null,
    requestBodySize: 0,
    responseStatus: null,
    responseHeaders: null,
    responseBody: null,
    durationMs: null,
    sentAt: attemptedAt,
    error,
    errorDetail: detail,
    retryAt: null,
    dlq: row.noRetry !== 1,
  };
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

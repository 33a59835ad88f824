import { and, count, eq, gte, lte, ne, type SQL } from "drizzle-orm";
import { readHorizon, readHorizonMs } from "../db/horizon";
import { events, jobs } from "../db/schema";
import type { Deps } from "./deps";
import type { JobRow } from "./jobs";
import { inScope } from "./scope";

/** Which events a replay job covers (replay.ts), and on PostgreSQL when its window has settled. */

/** A replay job's params as stored with it (contracts/jobs.ts ReplayInput, checked). */
export interface ReplayParams {
  destination_id: string;
  source_id: string | null;
  /** Replay through this connection: its source only, its filter applies (absent in jobs made before it existed). */
  connection_id?: string | null;
  from: string;
  to: string;
  rate_limit: number;
  max_events: number;
}

export function inWindow(scope: Pick<JobRow, "orgId" | "envId">, p: ReplayParams): SQL {
  return and(
    inScope(events, scope),
    gte(events.receivedAt, p.from),
    lte(events.receivedAt, p.to),
    p.source_id ? eq(events.sourceId, p.source_id) : undefined,
  )!;
}

export function replayable(scope: Pick<JobRow, "orgId" | "envId">, p: ReplayParams): SQL {
  return and(inWindow(scope, p), ne(events.status, "rejected"), ne(events.dedupStatus, "duplicate"))!;
}

/**
 * On PostgreSQL another node may still commit an event stamped a moment ago
 * (src/db/horizon.ts). A replay covers what its window held when it started
 * (its total was counted then): while the end of that, min(to, started_at),
 * is within the read horizon, the walk reads only events older than the
 * horizon and waits for the rest. SQLite: null (one writer).
 */
export function unsettledWindow(deps: Pick<Deps, "db" | "clock">, job: Pick<JobRow, "startedAt">, p: ReplayParams): { horizon: string } | null {
  if (readHorizonMs(deps.db) === 0) return null;
  const horizon = readHorizon(deps.db, deps.clock.now());
  return windowEnd(job, p) >= horizon ? { horizon } : null;
}

const windowEnd = (job: Pick<JobRow, "startedAt">, p: ReplayParams) => (p.to < job.startedAt ? p.to : job.startedAt);

/**
 * Once the window has settled (PostgreSQL): events another node committed
 * after the start with a received_at inside the window were not in the
 * total counted at the start; they join the job. Whether it grew.
 */
export async function countLateCommits(deps: Deps, job: JobRow, p: ReplayParams): Promise<boolean> {
  if (readHorizonMs(deps.db) === 0 || job.total >= p.max_events) return false;
  const [matching] = await deps.db
    .select({ n: count() })
    .from(events)
    .where(and(replayable(job, p), lte(events.receivedAt, windowEnd(job, p))));
  const total = Math.min(Number(matching?.n ?? 0), p.max_events);
  if (total <= job.total) return false;
  await deps.db.update(jobs).set({ total }).where(eq(jobs.id, job.id));
  job.total = total;
  return true;
}

import { inScope } from "./scope";
import { and, count, eq, inArray, sql, type SQL } from "drizzle-orm";
// A pure leaf shared with the recording transaction: which outcomes open, count and resolve which issues.
import { issueSteps, issueTitle, type IssueOutcome } from "../rules/issueGrouping";
import { notFound } from "../contracts/errors";
import { hex32, normalizeId, normalizeIdOrNull } from "../contracts/ids";
import type { Issue, ListIssuesQuery, UpdateIssueInput } from "../contracts/issues";
import type { Db } from "../db/db";
import { never } from "../db/portableSql";
import { ph, preparedFor } from "../db/prepared";
import { connections, deliveryAttempts, destinations, issues } from "../db/schema";
import { iso } from "../core/clock";
import { transaction } from "../db/transaction";
import { recordAudit } from "./audit";
import type { Deps, Scope } from "./deps";
import { serializeAttempt } from "./deliveryAttempts";
import { paginate } from "./paging";

type IssueRow = typeof issues.$inferSelect;

export function serializeIssue(row: IssueRow, destinationName: string | null): Issue {
  return {
    id: row.id,
    org_id: row.orgId,
    env_id: row.envId,
    destination_id: row.destinationId,
    fingerprint: row.fingerprint,
    title: row.title,
    status: row.status,
    snoozed_until: row.snoozedUntil,
    occurrence_count: row.occurrenceCount,
    first_seen_at: row.firstSeenAt,
    last_seen_at: row.lastSeenAt,
    resolved_at: row.resolvedAt,
    last_attempt_id: row.lastAttemptId,
    last_event_id: row.lastEventId,
    last_error: row.lastError,
    last_status_code: row.lastStatusCode,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    destination_name: destinationName,
  };
}

// ---------------------------------------------------------------- bookkeeping, inside the recording transaction

/** An issue that opened, or reopened after being resolved, in a recorded batch: alert rules hear of it. */
export interface OpenedIssue {
  id: string;
  orgId: string;
  envId: string;
}

/**
 * The one insert-or-count of an issue by its fingerprint: a new issue opens
 * with `count` occurrences; an existing one counts them and takes the latest
 * attempt's details. With `reopen`, a conflict also sets it open again
 * whatever its status (acknowledged too): endpoint health opens
 * `<dst id>:endpoint_disabled` this way (src/domain/endpointHealth.ts).
 */
function upsertStatement(db: Db, reopen: boolean) {
  return db
    .insert(issues)
    .values({
      id: ph("id"),
      orgId: ph("orgId"),
      envId: ph("envId"),
      destinationId: ph("destinationId"),
      fingerprint: ph("fingerprint"),
      title: ph("title"),
      status: "open",
      occurrenceCount: ph("count"),
      firstSeenAt: ph("now"),
      lastSeenAt: ph("now"),
      lastAttemptId: ph("attemptId"),
      lastEventId: ph("eventId"),
      lastError: ph("error"),
      lastStatusCode: ph("statusCode"),
      createdAt: ph("now"),
      updatedAt: ph("now"),
    })
    .onConflictDoUpdate({
      target: issues.fingerprint,
      set: {
        ...(reopen ? { status: "open" as const, resolvedAt: null } : {}),
        occurrenceCount: sql`${issues.occurrenceCount} + excluded.occurrence_count`,
        lastSeenAt: sql`excluded.last_seen_at`,
        lastAttemptId: sql`excluded.last_attempt_id`,
        lastEventId: sql`excluded.last_event_id`,
        lastError: sql`excluded.last_error`,
        lastStatusCode: sql`excluded.last_status_code`,
        updatedAt: sql`excluded.updated_at`,
      },
    })
    .returning({ id: issues.id })
    .prepare();
}

/**
 * Prepared once per SQLite database, built per call on PostgreSQL
 * (src/db/prepared.ts): they run in the delivery pump's write transaction.
 * Drizzle's builders keep them dialect-neutral (ON CONFLICT … DO UPDATE and
 * RETURNING exist in both); `.execute()` runs them on either.
 */
const statements = preparedFor((db: Db) => ({
  resolve: db
    .update(issues)
    .set({ status: "resolved", resolvedAt: ph("now"), updatedAt: ph("now") })
    .where(and(eq(issues.destinationId, ph("destinationId")), inArray(issues.status, ["open", "acknowledged"])))
    .prepare(),
  reopen: db
    .update(issues)
    .set({ status: "open", resolvedAt: null })
    .where(and(eq(issues.fingerprint, ph("fingerprint")), eq(issues.status, "resolved")))
    .returning({ id: issues.id })
    .prepare(),
  upsert: upsertStatement(db, false),
  upsertOpen: upsertStatement(db, true),
}));

/** One occurrence (or `count` of them) of an issue, as upsertIssue stores it. */
export type IssueOccurrence = {
  id: string;
  orgId: string;
  envId: string;
  destinationId: string;
  fingerprint: string;
  title: string;
  count: number;
  /** ISO time. */
  now: string;
  attemptId: string;
  eventId: string;
  error: string | null;
  statusCode: number | null;
};

/** Opens the issue or counts the occurrence against it (upsertStatement); answers the issue's id. Inside the caller's write transaction. */
export async function upsertIssue(db: Db, occurrence: IssueOccurrence, { reopen }: { reopen: boolean }): Promise<string | undefined> {
  const s = statements(db);
  const [row] = await (reopen ? s.upsertOpen : s.upsert).execute(occurrence);
  return row?.id;
}

/**
 * Keeps issues current for a batch of recorded outcomes, in the caller's
 * write transaction (the one that records them): no second pass over
 * attempts.
 */
export async function recordIssueOutcomes(db: Db, outcomes: readonly IssueOutcome[], now: Date): Promise<OpenedIssue[]> {
  if (outcomes.length === 0) return [];
  const s = statements(db);
  const at = iso(now);
  const opened: OpenedIssue[] = [];
  for (const step of issueSteps(outcomes)) {
    if (step.kind === "resolve") {
      await s.resolve.execute({ destinationId: step.destinationId, now: at });
      continue;
    }
    const o = step.last;
    const a = o.attempt;
    const reopened = (await s.reopen.execute({ fingerprint: step.fingerprint })).length > 0;
    const id = hex32();
    const [row] = await s.upsert.execute({
      id,
      orgId: a.orgId,
      envId: a.envId,
      destinationId: a.destinationId,
      fingerprint: step.fingerprint,
      title: issueTitle(step.cls),
      count: step.count,
      now: at,
      attemptId: a.id,
      eventId: a.eventId,
      error: o.errorDetail ?? o.error,
      statusCode: o.responseStatus,
    });
    if (row && (reopened || row.id === id)) opened.push({ id: row.id, orgId: a.orgId, envId: a.envId });
  }
  return opened;
}

// ---------------------------------------------------------------- the API's use-cases

function filtersFor(scope: Scope, q: Pick<ListIssuesQuery, "status" | "destination_id">): SQL | undefined {
  const conds: SQL[] = [inScope(issues, scope)];
  if (q.status) conds.push(eq(issues.status, q.status));
  if (q.destination_id !== undefined) {
    // An id that cannot exist filters to nothing rather than failing the list.
    const id = normalizeIdOrNull(q.destination_id, "destination");
    conds.push(id ? eq(issues.destinationId, id) : never());
  }
  return and(...conds);
}

/** Newest first (by when the issue first opened), with offset or cursor pages as GET /v1/events. */
export async function listIssues({ db }: Deps, scope: Scope, query: ListIssuesQuery) {
  const { rows, pagination } = await paginate({
    page: query,
    cols: { time: issues.createdAt, id: issues.id },
    filters: filtersFor(scope, query),
    select: (where, order, limit, offset) =>
      db
        .select({ issue: issues, destinationName: destinations.name })
        .from(issues)
        .leftJoin(destinations, eq(destinations.id, issues.destinationId))
        .where(where)
        .orderBy(...order)
        .limit(limit)
        .offset(offset),
    total: async (where) => (await db.select({ n: count() }).from(issues).where(where))[0]?.n ?? 0,
    key: (r) => ({ t: r.issue.createdAt, id: r.issue.id }),
  });
  return { issues: rows.map((r) => serializeIssue(r.issue, r.destinationName)), pagination };
}

async function findIssue({ db }: Deps, scope: Scope, rawId: string) {
  const id = normalizeId(rawId, undefined, "Issue");
  const [row] = await db
    .select({ issue: issues, destinationName: destinations.name })
    .from(issues)
    .leftJoin(destinations, eq(destinations.id, issues.destinationId))
    .where(and(eq(issues.id, id), inScope(issues, scope)))
    .limit(1);
  if (!row) throw notFound("Issue");
  return row;
}

/** The issue and its last failed attempt (request and response), for the detail page. */
export async function getIssue(deps: Deps, scope: Scope, rawId: string) {
  const { issue, destinationName } = await findIssue(deps, scope, rawId);
  let lastAttempt = null;
  if (issue.lastAttemptId) {
    const [a] = await deps.db
      .select({ attempt: deliveryAttempts, connectionName: connections.name, destinationName: destinations.name })
      .from(deliveryAttempts)
      .leftJoin(connections, eq(connections.id, deliveryAttempts.connectionId))
      .leftJoin(destinations, eq(destinations.id, deliveryAttempts.destinationId))
      .where(and(eq(deliveryAttempts.id, issue.lastAttemptId), inScope(deliveryAttempts, scope)))
      .limit(1);
    if (a) lastAttempt = serializeAttempt(a);
  }
  return { issue: serializeIssue(issue, destinationName), last_attempt: lastAttempt };
}

/**
 * PATCH: status and/or snoozed_until. Resolving sets resolved_at; any other
 * status clears it. A resolved issue reopens by itself on its next failure.
 */
export async function updateIssue(deps: Deps, scope: Scope, rawId: string, input: UpdateIssueInput) {
  return transaction(deps.db, () => updateIssueIn(deps, scope, rawId, input));
}

async function updateIssueIn(deps: Deps, scope: Scope, rawId: string, input: UpdateIssueInput) {
  const { issue, destinationName } = await findIssue(deps, scope, rawId);
  const now = iso(deps.clock.now());
  const next: IssueRow = { ...issue, updatedAt: now };
  if (input.status !== undefined && input.status !== issue.status) {
    next.status = input.status;
    next.resolvedAt = input.status === "resolved" ? now : null;
  }
  if (input.snoozed_until !== undefined) next.snoozedUntil = input.snoozed_until === null ? null : new Date(input.snoozed_until).toISOString();
  await deps.db
    .update(issues)
    .set({ status: next.status, resolvedAt: next.resolvedAt, snoozedUntil: next.snoozedUntil, updatedAt: next.updatedAt })
    .where(eq(issues.id, issue.id));
  await recordAudit(deps, scope, { action: "update", resourceType: "issue", resourceId: issue.id, before: serializeIssue(issue, destinationName), after: serializeIssue(next, destinationName) });
  return { issue: serializeIssue(next, destinationName) };
}

// ---------------------------------------------------------------- for alerts, stats and metrics

/** Issues by id, across scopes (the alert task holds ids it was told of), with their destination's name. */
export async function loadIssues({ db }: Deps, ids: string[]): Promise<Issue[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ issue: issues, destinationName: destinations.name })
    .from(issues)
    .leftJoin(destinations, eq(destinations.id, issues.destinationId))
    .where(inArray(issues.id, ids));
  return rows.map((r) => serializeIssue(r.issue, r.destinationName));
}

/** Open issues of one environment (the dashboard's card), or of every environment (the metrics gauge). */
export async function countOpenIssues({ db }: Deps, scope?: Pick<Scope, "orgId" | "envId">): Promise<number> {
  const where = scope ? and(inScope(issues, scope), eq(issues.status, "open")) : eq(issues.status, "open");
  const [row] = await db.select({ n: count() }).from(issues).where(where);
  return row?.n ?? 0;
}

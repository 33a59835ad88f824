import { and, desc, eq, lt, lte, or } from "drizzle-orm";
import { parseOrThrow } from "../contracts/errors";
import { listEndpointAttemptsQuery, type ListEndpointAttemptsQuery } from "../contracts/messages";
import { decodeCursor, encodeCursor } from "../contracts/pagination";
import { connections, deliveryAttempts, destinations } from "../db/schema";
import { attemptSerializerFor } from "../domain/deliveryAttempts";
import type { Deps, Scope } from "../domain/deps";
import { findEndpoint } from "./endpoints";

/** The endpoint's attempts (every message, retries included), newest first, in cursor pages. */
export async function listEndpointAttempts(deps: Deps, scope: Scope, appId: string, endpointId: string, raw: ListEndpointAttemptsQuery = {}) {
  const query = parseOrThrow(listEndpointAttemptsQuery, raw ?? {}, "Invalid query", ["query"]);
  const { destination } = await findEndpoint(deps, scope, appId, endpointId);
  const a = deliveryAttempts;
  const conds = [eq(a.destinationId, destination.id), query.status ? eq(a.status, query.status) : undefined];
  if (query.cursor) {
    const c = decodeCursor(query.cursor, "next");
    conds.push(lte(a.createdAt, c.t), or(lt(a.createdAt, c.t), lt(a.id, c.id)));
  }
  const rows = await deps.db
    .select({ attempt: a, connectionName: connections.name, destinationName: destinations.name })
    .from(a)
    .leftJoin(connections, eq(connections.id, a.connectionId))
    .leftJoin(destinations, eq(destinations.id, a.destinationId))
    .where(and(...conds))
    .orderBy(desc(a.createdAt), desc(a.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return { attempts: page.map(attemptSerializerFor(scope)), cursor: rows.length > query.limit && last ? encodeCursor({ t: last.attempt.createdAt, id: last.attempt.id }, "next") : null };
}

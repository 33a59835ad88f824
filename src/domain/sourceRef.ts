import { and, eq } from "drizzle-orm";
import { notFound } from "../contracts/errors";
import { normalizeId } from "../contracts/ids";
import { sources } from "../db/schema";
import type { Deps, Scope } from "./deps";
import { inScope } from "./scope";

/** A source of the caller's scope as the resources that read from it name it (connections, collections): its id and name; 404 otherwise. */
export async function findSourceRef({ db }: Pick<Deps, "db">, scope: Scope, rawId: string): Promise<{ id: string; name: string }> {
  const id = normalizeId(rawId, "source", "Source");
  const [row] = await db
    .select({ id: sources.id, name: sources.name })
    .from(sources)
    .where(and(eq(sources.id, id), inScope(sources, scope)))
    .limit(1);
  if (!row) throw notFound("Source");
  return row;
}

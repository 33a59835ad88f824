import { and, eq, like, or } from "drizzle-orm";
import type { Db } from "../db/db";
import { sources } from "../db/schema";

/** A name as a slug: lowercase letters, digits and dashes, at most 80 characters; `fallback` when nothing is left. */
export function slugify(name: string, fallback: string): string {
  const s = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80);
  return s || fallback;
}

/**
 * The first of `base`, `base-2`, `base-3` … that no source of the environment
 * has: sources, topics (their source) and the outbound source all pick their
 * slug this way. LIKE's wildcards and case folding only widen what is read;
 * the loop compares exactly.
 */
export async function freeSourceSlug(db: Db, orgId: string, envId: string, base: string): Promise<string> {
  const taken = new Set(
    (
      await db
        .select({ slug: sources.slug })
        .from(sources)
        .where(and(eq(sources.orgId, orgId), eq(sources.envId, envId), or(eq(sources.slug, base), like(sources.slug, `${base}-%`))))
    ).map((r) => r.slug),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

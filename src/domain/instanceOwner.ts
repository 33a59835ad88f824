import { asc, eq } from "drizzle-orm";
import { users } from "../db/schema";
import type { Db } from "../db/db";
import type { Deps, Scope } from "./deps";

/**
 * The instance's owner: the admin user created on the first start, marked
 * `users.instance_owner` (organizations and users added later never are). Whole-instance
 * operations (backups, restore, the cluster's hosts, instance settings) are
 * theirs alone, whatever organization another caller acts in (docs/api.md,
 * "Who may do what").
 */
export async function instanceOwnerId(db: Db): Promise<string | null> {
  const [owner] = await db.select({ id: users.id }).from(users).where(eq(users.instanceOwner, 1)).orderBy(asc(users.createdAt), asc(users.id)).limit(1);
  return owner?.id ?? null;
}

/**
 * Whether the caller acts for the owner: the owner's session, a key the
 * owner created (from a session, or in local CLI mode: keys record the owner
 * as their creator there), or local CLI mode itself (the operator on the
 * machine, who can read the data dir anyway). A key without a creator, a
 * portal link, any other user and their keys: no.
 */
export async function isInstanceOwner({ db }: Pick<Deps, "db">, scope: Scope): Promise<boolean> {
  if (scope.via === "local") return true;
  if (scope.via === "portal" || scope.userId === null) return false;
  return scope.userId === (await instanceOwnerId(db));
}

import { eq } from "drizzle-orm";
import { environments, memberships, organizations, users } from "../db/schema";
import { hex32 } from "../contracts/ids";
import type { Db } from "../db/db";
import { exclusive } from "../db/exclusive";
import { iso, type Clock } from "../core/clock";
import { hashAdminPassword, type AdminPassword } from "./adminPassword";

export interface BootstrapResult {
  created: boolean;
  email: string;
  /** Only when it was generated now: printed once, never stored in plain text. */
  generatedPassword?: string;
}

/**
 * First start on an empty database: org `default`, env `production`, one
 * admin user, the instance's owner and the organization's owner. Nodes starting at once on one empty database take turns
 * (exclusive), and the check is made again in that turn: one of them creates,
 * the others find what it created.
 */
export async function bootstrap(db: Db, clock: Clock, admin: { email: string; password?: string; prepared?: AdminPassword }): Promise<BootstrapResult> {
  const found = await existingAdmin(db, admin.email);
  if (found) return found;
  // Hashing takes a while (argon2id): done before the turn, not while holding it; a first start began it already (src/boot/firstStart.ts).
  const { generatedPassword, passwordHash: hashing } = admin.prepared ?? hashAdminPassword(admin.password);
  const passwordHash = await hashing;
  return exclusive(db, "bootstrap", async (tx) => {
    const meanwhile = await existingAdmin(tx, admin.email);
    if (meanwhile) return meanwhile;
    const now = iso(clock.now());
    const orgId = hex32();
    const envId = hex32();
    const userId = hex32();
    await tx.insert(organizations).values({ id: orgId, name: "default", slug: "default", createdAt: now, updatedAt: now });
    await tx.insert(environments).values({ id: envId, orgId, name: "production", slug: "production", createdAt: now, updatedAt: now });
    await tx.insert(users).values({ id: userId, email: admin.email.toLowerCase(), passwordHash, orgId, envId, instanceOwner: 1, createdAt: now });
    await tx.insert(memberships).values({ id: hex32(), orgId, userId, role: "owner", status: "active", envId, createdAt: now, updatedAt: now });
    return { created: true, email: admin.email.toLowerCase(), generatedPassword };
  });
}

async function existingAdmin(db: Db, email: string): Promise<BootstrapResult | null> {
  const existing = await db.select({ id: organizations.id }).from(organizations).limit(1);
  if (existing.length === 0) return null;
  const [user] = await db.select({ email: users.email }).from(users).limit(1);
  return { created: false, email: user?.email ?? email };
}

/** The scope local CLI mode acts in: the first org's first environment. */
export async function defaultScope(db: Db) {
  const [env] = await db
    .select({ orgId: environments.orgId, envId: environments.id })
    .from(environments)
    .innerJoin(organizations, eq(organizations.id, environments.orgId))
    .orderBy(environments.createdAt)
    .limit(1);
  return env;
}

import { eq } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { environments, organizations, users } from "../db/schema";
import { hex32 } from "../contracts/ids";
import type { Db } from "../db/open";
import { transaction } from "../db/transaction";
import { iso, type Clock } from "./clock";

export interface BootstrapResult {
  created: boolean;
  email: string;
  /** Only when it was generated now: printed once, never stored in plain text. */
  generatedPassword?: string;
}

/** First start on an empty database: org `default`, env `production`, one admin user. */
export async function bootstrap(db: Db, clock: Clock, admin: { email: string; password?: string }): Promise<BootstrapResult> {
  const existing = await db.select({ id: organizations.id }).from(organizations).limit(1);
  if (existing.length > 0) {
    const [user] = await db.select({ email: users.email }).from(users).limit(1);
    return { created: false, email: user?.email ?? admin.email };
  }
  const generatedPassword = admin.password ? undefined : randomBytes(12).toString("base64url");
  const password = admin.password ?? generatedPassword!;
  const passwordHash = await Bun.password.hash(password, { algorithm: "argon2id" });
  const now = iso(clock.now());
  const orgId = hex32();
  const envId = hex32();
  await transaction(db, async (tx) => {
    await tx.insert(organizations).values({ id: orgId, name: "default", slug: "default", createdAt: now });
    await tx.insert(environments).values({ id: envId, orgId, name: "production", createdAt: now });
    await tx.insert(users).values({ id: hex32(), email: admin.email.toLowerCase(), passwordHash, orgId, envId, createdAt: now });
  });
  return { created: true, email: admin.email.toLowerCase(), generatedPassword };
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

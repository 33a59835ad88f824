import { eq } from "drizzle-orm";
import { environments, memberships, organizations, users } from "../../src/db/schema";
import { hex32 } from "../../src/contracts/ids";
import type { Role } from "../../src/contracts/roles";
import type { TestServer } from "./server";

/**
 * Organizations and people made straight in the store, for tests of who
 * may do what: the members API has its own tests; these need a second user
 * with a given role and nothing more.
 */
export const PASSWORD = "a member's long password";

/** An organization with its `production` environment, and no member. */
export async function insertOrganization(server: TestServer, name: string, slug = `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${hex32().slice(0, 6)}`) {
  const now = new Date().toISOString();
  const orgId = hex32();
  const envId = hex32();
  await server.deps.db.insert(organizations).values({ id: orgId, name, slug, createdAt: now, updatedAt: now });
  await server.deps.db.insert(environments).values({ id: envId, orgId, name: "production", slug: "production", createdAt: now, updatedAt: now });
  return { orgId, envId, slug };
}

/**
 * A membership of `email` in the organization with `role` (the user is made
 * on first use, acting in that organization); returns the user's id.
 */
export async function addPerson(server: TestServer, email: string, orgId: string, role: Role, status: "active" | "invited" | "disabled" = "active"): Promise<string> {
  const { db } = server.deps;
  const now = new Date().toISOString();
  const [env] = await db.select({ id: environments.id }).from(environments).where(eq(environments.orgId, orgId)).limit(1);
  let [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  if (!user) {
    user = { id: hex32() };
    await db.insert(users).values({ id: user.id, email, passwordHash: await Bun.password.hash(PASSWORD), orgId, envId: env!.id, createdAt: now });
  }
  await db.insert(memberships).values({ id: hex32(), orgId, userId: user.id, role, status, envId: env!.id, createdAt: now, updatedAt: now });
  return user.id;
}

/** Logs in; returns the headers of session requests (cookie, same-origin Origin), or the failed answer's status. */
export async function signIn(server: TestServer, email: string, password = PASSWORD): Promise<Record<string, string>> {
  const res = await server.request("/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${await res.text()}`);
  return { cookie: res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), origin: server.url };
}

/** A `*` API key made from the session, as the UI would. */
export async function keyFrom(server: TestServer, session: Record<string, string>): Promise<string> {
  const res = await server.request("/v1/auth/api-keys", { method: "POST", headers: { ...session, "content-type": "application/json" }, body: JSON.stringify({ name: "member's key", scopes: "*" }) });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

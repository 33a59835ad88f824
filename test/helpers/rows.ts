import { environments, events, memberships, organizations } from "../../src/db/schema";
import { instanceOwnerId } from "../../src/domain/instanceOwner";
import { createApiKey } from "../../src/domain/apiKeys";
import { hex32, newId } from "../../src/contracts/ids";
import { call, type TestServer } from "./server";

/** What the delivery tests need from other areas: sources, stored events, a second organization. */
export interface TestScope {
  orgId: string;
  envId: string;
}

export async function scopeOf(server: TestServer, key: string): Promise<TestScope> {
  const me = await call(server, "GET", "/v1/auth/me", { key });
  if (me.status !== 200) throw new Error(`auth/me: ${me.status}`);
  return { orgId: me.body.org_id, envId: me.body.env_id };
}

/** A source made through the API (POST /v1/sources). */
export async function createSource(server: TestServer, key: string, name = "Test source"): Promise<{ id: string; name: string }> {
  const res = await call(server, "POST", "/v1/sources", { key, body: { name } });
  if (res.status !== 201) throw new Error(`POST /v1/sources: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.source.id, name: res.body.source.name };
}

/**
 * A stored event, written straight to the table: ingesting through the API
 * would also route it to the test's connections and send it out.
 */
export async function insertEvent(
  server: TestServer,
  scope: TestScope,
  sourceId: string,
  req: { body: string | Uint8Array; headers?: Record<string, string>; query?: string | null; method?: string; path?: string; contentType?: string | null; receivedAt?: string },
): Promise<string> {
  const id = newId("event");
  const body = typeof req.body === "string" ? Buffer.from(req.body) : Buffer.from(req.body);
  await server.deps.db.insert(events).values({
    id,
    orgId: scope.orgId,
    envId: scope.envId,
    sourceId,
    method: req.method ?? "POST",
    path: req.path ?? "/",
    query: req.query ?? null,
    contentType: req.contentType === undefined ? "application/json" : req.contentType,
    headers: JSON.stringify(req.headers ?? {}),
    body,
    payloadSize: body.byteLength,
    verificationStatus: "skipped",
    dedupStatus: "skipped",
    // Already routed: the delivery router leaves it alone, so no test sends anything by accident.
    status: "ignored",
    // Another node's event may carry a received_at earlier than what is already stored (its clock, its slower commit).
    receivedAt: req.receivedAt ?? new Date().toISOString(),
    routedAt: new Date().toISOString(),
  });
  return id;
}

/** An API key of a second organization, to prove one scope never sees another's rows. */
export async function otherOrgKey(server: TestServer): Promise<string> {
  const now = new Date().toISOString();
  const orgId = hex32();
  const envId = hex32();
  await server.deps.db.insert(organizations).values({ id: orgId, name: "Other", slug: `other-${orgId}`, createdAt: now });
  await server.deps.db.insert(environments).values({ id: envId, orgId, name: "production", slug: "production", createdAt: now, updatedAt: now });
  // Its key is the instance owner's (local mode makes keys theirs), so the owner is a member there too.
  const owner = (await instanceOwnerId(server.deps.db))!;
  await server.deps.db.insert(memberships).values({ id: hex32(), orgId, userId: owner, role: "owner", status: "active", envId, createdAt: now, updatedAt: now });
  const created = await createApiKey(server.deps, { orgId, envId, userId: null, via: "local", scopes: "*", role: "owner" }, { name: "other" });
  return created.key;
}

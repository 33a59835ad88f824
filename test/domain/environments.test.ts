import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { AppError } from "../../src/contracts/errors";
import { alertRules, apiKeys, connections, destinations, environments, notificationChannels, sources, users } from "../../src/db/schema";
import { createAlertRule } from "../../src/domain/alertRules";
import { createApiKey } from "../../src/domain/apiKeys";
import { createConnection } from "../../src/domain/connections";
import { createDestination } from "../../src/domain/destinations";
import { createEnvironment, deleteEnvironment } from "../../src/domain/environments";
import { createChannel } from "../../src/domain/notificationChannels";
import { createSource } from "../../src/domain/sources";
import type { Scope } from "../../src/domain/deps";
import { openDomain, type DomainHarness } from "../helpers/domainDeps";

let h: DomainHarness;
beforeAll(async () => {
  h = await openDomain();
});
afterAll(async () => {
  await h?.close();
});

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

/** A new environment of the harness's organization, and a scope acting in it. */
async function newEnv(name: string): Promise<{ id: string; scope: Scope }> {
  const { environment } = await createEnvironment(h.deps, h.scope, { name });
  return { id: environment.id, scope: { ...h.scope, envId: environment.id } };
}

/** One of each kind whose env_id carries no foreign key, and a source and key that go by cascade. */
async function fill(scope: Scope) {
  const source = await createSource(h.deps, scope, { name: "held" });
  const destination = await createDestination(h.deps, scope, { name: "held", url: "https://example.com/in" } as never);
  await createConnection(h.deps, scope, { name: "held", source_id: source.source.id, destination_id: destination.destination.id } as never);
  await createChannel(h.deps, scope, { name: "held", channel_type: "webhook", config: { url: "https://example.com/alerts" } } as never);
  await createAlertRule(h.deps, scope, { name: "held", rule_type: "failure_rate", rule_config: { threshold_percent: 25 } } as never);
  await createApiKey(h.deps, scope, { name: "held" } as never);
}

const rowsOf = async (envId: string) => ({
  sources: (await h.deps.db.select().from(sources).where(eq(sources.envId, envId))).length,
  destinations: (await h.deps.db.select().from(destinations).where(eq(destinations.envId, envId))).length,
  connections: (await h.deps.db.select().from(connections).where(eq(connections.envId, envId))).length,
  channels: (await h.deps.db.select().from(notificationChannels).where(eq(notificationChannels.envId, envId))).length,
  rules: (await h.deps.db.select().from(alertRules).where(eq(alertRules.envId, envId))).length,
  keys: (await h.deps.db.select().from(apiKeys).where(eq(apiKeys.envId, envId))).length,
});

describe("deleting an environment, called on the domain directly", () => {
  it("refuses one holding resources, naming each kind with its count, and leaves them", async () => {
    const env = await newEnv("Full");
    await fill(env.scope);
    const err = await refusal(deleteEnvironment(h.deps, h.scope, env.id));
    expect(err.code).toBe("conflict");
    expect(err.message).toBe(
      'Environment "full" still holds 1 sources, 1 destinations, 1 connections, 1 alert rules, 1 notification channels, 1 API keys: delete them first, or pass force=true to delete them with it',
    );
    expect(await rowsOf(env.id)).toEqual({ sources: 1, destinations: 1, connections: 1, channels: 1, rules: 1, keys: 1 });
  });

  it("with force deletes it and everything it holds, even rows whose env_id has no foreign key", async () => {
    const env = await newEnv("Forced full");
    await fill(env.scope);
    await deleteEnvironment(h.deps, h.scope, env.id, { force: true });
    expect(await rowsOf(env.id)).toEqual({ sources: 0, destinations: 0, connections: 0, channels: 0, rules: 0, keys: 0 });
    expect(await h.deps.db.select().from(environments).where(eq(environments.id, env.id))).toEqual([]);
    // The key is gone on every node: live streams held with it end.
    expect(h.published.some((m) => m.type === "credential.revoked")).toBe(true);
    // Every node forgets the cached source and destination, as deleting each alone makes it.
    expect(h.published.map((m) => m.type)).toEqual(expect.arrayContaining(["source.updated", "destination.updated", "connection.updated"]));
  });

  it("keeps a user whose last used environment it was, moving them to the caller's", async () => {
    const env = await newEnv("Someone's last");
    const [admin] = await h.deps.db.select().from(users).limit(1);
    await h.deps.db.update(users).set({ envId: env.id }).where(eq(users.id, admin!.id));
    await deleteEnvironment(h.deps, h.scope, env.id);
    const [after] = await h.deps.db.select().from(users).where(eq(users.id, admin!.id));
    expect(after?.envId).toBe(h.scope.envId);
  });

  it("refuses the environment the caller acts in, even with force", async () => {
    const err = await refusal(deleteEnvironment(h.deps, h.scope, h.scope.envId, { force: true }));
    expect(err.code).toBe("conflict");
    expect(err.message).toBe("This is the environment you are acting in: switch to another one before deleting it");
  });

  it("refuses an organization's last environment", async () => {
    const env = await newEnv("Lonely");
    // Delete every other environment, acting from the one that stays, then ask to delete that one from a scope elsewhere.
    for (const e of await h.deps.db.select().from(environments).where(eq(environments.orgId, h.scope.orgId))) {
      if (e.id !== env.id) await deleteEnvironment(h.deps, env.scope, e.id, { force: true });
    }
    const err = await refusal(deleteEnvironment(h.deps, { ...h.scope, envId: "0".repeat(32) }, env.id, { force: true }));
    expect(err.code).toBe("conflict");
    expect(err.message).toBe("An organization keeps at least one environment: this is its last");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/contracts/errors";
import { createSource, listSources, updateSource } from "../../src/domain/sources";
import { createTopic } from "../../src/domain/topics";
import { openDomain, type DomainHarness } from "../helpers/domainDeps";

let h: DomainHarness;
beforeAll(async () => {
  h = await openDomain();
});
afterAll(async () => {
  await h?.close();
});

async function conflict(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe("conflict");
  return err as AppError;
}

describe("source slugs, called on the domain directly", () => {
  it("picks the name's slug, then numbers it when a source of the environment has it", async () => {
    const a = await createSource(h.deps, h.scope, { name: "Stripe Payments!" });
    const b = await createSource(h.deps, h.scope, { name: "stripe payments" });
    const c = await createSource(h.deps, h.scope, { name: "Stripe  payments" });
    expect([a.source.slug, b.source.slug, c.source.slug]).toEqual(["stripe-payments", "stripe-payments-2", "stripe-payments-3"]);
    // A name with nothing sluggable in it falls back to "source".
    expect((await createSource(h.deps, h.scope, { name: "***" })).source.slug).toBe("source");
  });

  it("refuses a slug given explicitly that a source already has, on create and on update", async () => {
    await createSource(h.deps, h.scope, { name: "GitHub", slug: "github" });
    expect((await conflict(createSource(h.deps, h.scope, { name: "Other", slug: "github" }))).message).toBe('A source with slug "github" already exists');
    const other = await createSource(h.deps, h.scope, { name: "Other" });
    expect((await conflict(updateSource(h.deps, h.scope, other.source.id, { slug: "github" }))).message).toBe('A source with slug "github" already exists');
    const renamed = await updateSource(h.deps, h.scope, other.source.id, { slug: "github-mirror" });
    expect(renamed.source.slug).toBe("github-mirror");
    expect(h.published).toContainEqual({ type: "source.updated", sourceId: other.source.id });
  });

  it("gives a topic's source the slug topic-<slug>, numbered past a source that has it", async () => {
    await createSource(h.deps, h.scope, { name: "x", slug: "topic-orders" });
    const { topic } = await createTopic(h.deps, h.scope, { name: "Orders" });
    expect(topic.slug).toBe("orders");
    const { sources: all } = await listSources(h.deps, h.scope);
    expect(all.find((s) => s.id === topic.source_id)?.slug).toBe("topic-orders-2");
  });
});

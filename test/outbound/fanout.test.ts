import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settleMessages } from "../../src/domain/messageSettlement";
import { createApplication } from "../../src/outbound/applications";
import { createEndpoint } from "../../src/outbound/endpoints";
import { createMessage } from "../../src/outbound/fanout";
import { getMessage, listMessageAttempts } from "../../src/outbound/messages";
import { openDomain, type DomainHarness } from "../helpers/domainDeps";

let h: DomainHarness;
beforeAll(async () => {
  h = await openDomain();
});
afterAll(async () => {
  await h?.close();
});

async function endpoint(appId: string, url: string, extra: Record<string, unknown> = {}) {
  return (await createEndpoint(h.deps, h.scope, appId, { url, ...extra })).endpoint;
}

const eventIdOf = (messageId: string) => `evt_${messageId}`;

describe("message fan-out and settlement, called on src/outbound directly", () => {
  it("queues one delivery per active endpoint whose filter_types admit the event type, and none elsewhere", async () => {
    const { application: app } = await createApplication(h.deps, h.scope, { name: "Acme", uid: "acme-fanout" });
    const created = await endpoint(app.id, "https://acme.example.com/created", { filter_types: ["order.created"] });
    const shipped = await endpoint(app.id, "https://acme.example.com/shipped", { filter_types: ["order.shipped"] });
    const every = await endpoint(app.id, "https://acme.example.com/every");
    await endpoint(app.id, "https://acme.example.com/off", { status: "disabled" });

    const sent = await createMessage(h.deps, h.scope, app.uid, { event_type: "order.created", payload: { id: 1 } });
    expect(sent.created).toBe(true);
    expect(sent.message.status).toBe("pending");
    const { attempts } = await listMessageAttempts(h.deps, h.scope, app.id, sent.message.id);
    expect(attempts.map((a) => a.destination_id).sort()).toEqual([`dst_${created.id}`, `dst_${every.id}`].sort());
    expect(attempts.every((a) => a.status === "queued" && a.trigger_type === "initial")).toBe(true);
    expect(attempts.some((a) => a.destination_id === `dst_${shipped.id}`)).toBe(false);
    expect(h.published).toContainEqual({ type: "delivery.queued" });

    // A type only the endpoint without filter_types takes goes there alone.
    const other = await createMessage(h.deps, h.scope, app.id, { event_type: "invoice.paid", payload: {} });
    expect((await listMessageAttempts(h.deps, h.scope, app.id, other.message.id)).attempts.map((a) => a.destination_id)).toEqual([`dst_${every.id}`]);

    // A type no endpoint takes is stored, and ignored.
    const { application: picky } = await createApplication(h.deps, h.scope, { name: "Picky" });
    await endpoint(picky.id, "https://picky.example.com/hook", { filter_types: ["order.created"] });
    const none = await createMessage(h.deps, h.scope, picky.id, { event_type: "invoice.paid", payload: {} });
    expect(none.message.status).toBe("ignored");
    expect((await listMessageAttempts(h.deps, h.scope, picky.id, none.message.id)).attempts).toEqual([]);
  });

  it("answers the first message again for a repeated idempotency key, and queues nothing new", async () => {
    const { application: app } = await createApplication(h.deps, h.scope, { name: "Keyed" });
    await endpoint(app.id, "https://keyed.example.com/hook");
    const first = await createMessage(h.deps, h.scope, app.id, { id: "order-42", event_type: "order.created", payload: { n: 1 } });
    const again = await createMessage(h.deps, h.scope, app.id, { id: "order-42", event_type: "order.other", payload: { n: 2 } });
    expect(again.created).toBe(false);
    expect(again.message).toEqual(first.message);
    expect((await listMessageAttempts(h.deps, h.scope, app.id, "order-42")).attempts).toHaveLength(1);
  });

  it("settles a message by counting its delivery chains: pending until the last ends, then delivered or failed", async () => {
    const { application: app } = await createApplication(h.deps, h.scope, { name: "Settled" });
    await endpoint(app.id, "https://settled.example.com/a");
    await endpoint(app.id, "https://settled.example.com/b");
    const ok = (await createMessage(h.deps, h.scope, app.id, { event_type: "e.one", payload: {} })).message;
    const bad = (await createMessage(h.deps, h.scope, app.id, { event_type: "e.two", payload: {} })).message;
    const now = new Date();

    const first = await settleMessages(h.deps.db, new Map([[eventIdOf(ok.id), { settled: 1, dlq: 0 }]]), now);
    expect(first).toEqual({ changed: [], unknown: [] });
    expect((await getMessage(h.deps, h.scope, app.id, ok.id)).message.status).toBe("pending");

    const last = await settleMessages(
      h.deps.db,
      new Map([
        [eventIdOf(ok.id), { settled: 1, dlq: 0 }],
        [eventIdOf(bad.id), { settled: 2, dlq: 1 }],
        ["evt_not_a_message", { settled: 1, dlq: 0 }],
      ]),
      now,
    );
    expect(last.unknown).toEqual(["evt_not_a_message"]);
    expect(last.changed.map((c) => [c.id, c.status]).sort()).toEqual(
      [
        [eventIdOf(ok.id), "delivered"],
        [eventIdOf(bad.id), "failed"],
      ].sort(),
    );
    expect((await getMessage(h.deps, h.scope, app.id, ok.id)).message.status).toBe("delivered");
    expect((await getMessage(h.deps, h.scope, app.id, bad.id)).message.status).toBe("failed");
  });
});

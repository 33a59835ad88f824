import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusMessage } from "../../src/core/bus";
import { createBus } from "../../src/live/bus";
import { publishAfterCommit } from "../../src/db/committedBus";
import { organizations } from "../../src/db/schema";
import type { Store } from "../../src/db/store";
import { transaction } from "../../src/db/transaction";
import { dropStore, openStoreOf, TEST_STORE } from "../helpers/database";
import { storeName } from "../helpers/testStore";

/**
 * The bus deps carry (src/boot/deps.ts) delivers what a transaction
 * publishes once it commits, never what it published before rolling back,
 * and what is published outside a transaction at once.
 */
const dir = mkdtempSync(join(tmpdir(), "hookrelay-committed-bus-"));
let store: Store;
beforeAll(async () => {
  store = await openStoreOf(dir);
});
afterAll(async () => {
  await store?.close();
  await dropStore(dir);
  rmSync(dir, { recursive: true, force: true });
});

const org = (id: string) => ({ id, name: id, slug: id, createdAt: new Date().toISOString() });

function listening() {
  const seen: BusMessage[] = [];
  const inner = createBus();
  inner.subscribe((m) => seen.push(m));
  return { bus: publishAfterCommit(store.db, inner), seen };
}

describe(`the bus publishes after the commit (${storeName(TEST_STORE)})`, () => {
  it("holds a message published inside transaction() until the commit", async () => {
    const { bus, seen } = listening();
    let seenInside = -1;
    await transaction(store.db, async (tx) => {
      await tx.insert(organizations).values(org("bus-committed"));
      bus.publish({ type: "source.updated", sourceId: "src_committed" });
      seenInside = seen.length;
    });
    expect(seenInside).toBe(0);
    expect(seen).toEqual([{ type: "source.updated", sourceId: "src_committed" }]);
  });

  it("never delivers a message published in a transaction that throws", async () => {
    const { bus, seen } = listening();
    await expect(
      transaction(store.db, async (tx) => {
        await tx.insert(organizations).values(org("bus-rolled-back"));
        bus.publish({ type: "source.updated", sourceId: "src_rolled_back" });
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual([]);
  });

  it("drops what a savepoint published when the savepoint rolls back, and keeps the rest", async () => {
    const { bus, seen } = listening();
    await transaction(store.db, async () => {
      bus.publish({ type: "source.updated", sourceId: "src_kept" });
      await transaction(store.db, async () => {
        bus.publish({ type: "source.updated", sourceId: "src_undone" });
        throw new Error("savepoint");
      }).catch(() => {});
    });
    expect(seen).toEqual([{ type: "source.updated", sourceId: "src_kept" }]);
  });

  it("delivers a message published outside a transaction at once", () => {
    const { bus, seen } = listening();
    bus.publish({ type: "delivery.queued" });
    expect(seen).toEqual([{ type: "delivery.queued" }]);
  });
});

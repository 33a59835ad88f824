import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizations } from "../../src/db/schema";
import { type Store } from "../../src/db/store";
import { openStore } from "../../src/db/openStore";
import { transaction } from "../../src/db/transaction";
import { inWriteTurn } from "../../src/db/writeTurn";
import { describeOnly, emptyPgDatabase } from "../helpers/database";

/**
 * transaction() on both stores: committed when the work resolves, rolled
 * back when it throws, a nested call a savepoint of its own. Observed from
 * a second store handle on the same database, which sees only commits.
 */
const dir = mkdtempSync(join(tmpdir(), "hookrelay-tx-"));
const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const org = (id: string) => ({ id, name: id, slug: id, createdAt: new Date().toISOString() });

function behavesAsATransaction(name: string, open: () => Promise<{ store: Store; observer: Store }>) {
  describe(`transaction() on ${name}`, () => {
    let store: Store;
    let observer: Store;
    beforeAll(async () => {
      ({ store, observer } = await open());
    });
    const seen = async (id: string) => (await observer.db.select().from(organizations).where(eq(organizations.id, id))).length === 1;

    it("commits when the work resolves, and nobody else sees its writes before", async () => {
      let seenInside = true;
      await transaction(store.db, async (tx) => {
        await tx.insert(organizations).values(org("committed"));
        seenInside = await seen("committed");
      });
      expect(seenInside).toBe(false);
      expect(await seen("committed")).toBe(true);
    });

    it("rolls back everything when the work throws", async () => {
      await expect(
        transaction(store.db, async (tx) => {
          await tx.insert(organizations).values(org("rolled-back"));
          throw new Error("no");
        }),
      ).rejects.toThrow("no");
      expect(await seen("rolled-back")).toBe(false);
    });

    it("runs the root handle's statements inside the transaction while it is open", async () => {
      let visibleThroughRoot = false;
      await expect(
        transaction(store.db, async () => {
          await store.db.insert(organizations).values(org("through-root"));
          visibleThroughRoot = (await store.db.select().from(organizations).where(eq(organizations.id, "through-root"))).length === 1;
          throw new Error("undo");
        }),
      ).rejects.toThrow("undo");
      expect(visibleThroughRoot).toBe(true);
      expect(await seen("through-root")).toBe(false);
    });

    it("makes a nested call a savepoint: its failure is rolled back alone", async () => {
      await transaction(store.db, async (tx) => {
        await tx.insert(organizations).values(org("outer"));
        await expect(
          transaction(tx, async (inner) => {
            await inner.insert(organizations).values(org("inner"));
            throw new Error("inner fails");
          }),
        ).rejects.toThrow("inner fails");
      });
      expect(await seen("outer")).toBe(true);
      expect(await seen("inner")).toBe(false);
    });

    it("runs one write turn at a time: a write asked for while a turn commits sees that turn committed", async () => {
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const first = inWriteTurn(store.db, async () => {
        await store.db.insert(organizations).values(org("turn-1"));
        started();
        // A slow statement keeps the turn open (PostgreSQL; SQLite's one writer serialises turns anyway).
        if (store.dialect === "postgres") await (store.db as unknown as { execute(q: unknown): Promise<unknown> }).execute(sql`select pg_sleep(0.3)`);
      });
      await running;
      const second = inWriteTurn(store.db, async () => (await store.db.select().from(organizations).where(eq(organizations.id, "turn-1"))).length === 1);
      await first;
      expect(await second).toBe(true);
    });

    it("keeps concurrent transactions apart: a unique violation in one does not undo the other", async () => {
      const results = await Promise.allSettled([
        transaction(store.db, async (tx) => {
          await tx.insert(organizations).values(org("a-first"));
          await tx.insert(organizations).values(org("a-second"));
        }),
        transaction(store.db, async (tx) => {
          await tx.insert(organizations).values(org("b-first"));
          await tx.insert(organizations).values(org("a-first"));
        }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      // Whichever inserted a-first first wins whole; the other leaves nothing behind.
      const aWon = results[0]!.status === "fulfilled";
      expect(await seen("a-second")).toBe(aWon);
      expect(await seen("b-first")).toBe(!aWon);
    });
  });
}

behavesAsATransaction("SQLite", async () => {
  const store = await openStore({ dataDir: dir });
  const observer = await openStore({ dataDir: dir });
  stores.push(store, observer);
  return { store, observer };
});

describeOnly("postgres", "on PostgreSQL", "a database of its own on the run's cluster", () => {
  behavesAsATransaction("PostgreSQL", async () => {
    const { url } = await emptyPgDatabase();
    const store = await openStore({ dataDir: dir, databaseUrl: url });
    const observer = await openStore({ dataDir: dir, databaseUrl: url });
    stores.push(store, observer);
    return { store, observer };
  });
});

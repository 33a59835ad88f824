import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type OpenDb } from "../../src/db/sqlite/open";
import { inWriteTurn } from "../../src/db/writeTurn";
import { describeOnly } from "../helpers/database";

/**
 * Ingest's group commit and the delivery pump write in the turn's one
 * transaction: units asked for during a turn commit together, each in a
 * savepoint of its own. Observed from a second connection on the same file,
 * which sees only what has been committed.
 */
let dir: string;
let store: OpenDb;
let observer: Database;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hookrelay-turn-"));
  store = openDatabase(dir);
  store.sqlite.exec("CREATE TABLE turn_log (unit TEXT NOT NULL)");
  observer = new Database(store.path, { readonly: true });
});
afterAll(() => {
  observer.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const log = (unit: string) => store.sqlite.query("INSERT INTO turn_log (unit) VALUES (?)").run(unit);
const committed = () => (observer.query("SELECT unit FROM turn_log ORDER BY rowid").all() as { unit: string }[]).map((r) => r.unit);
const clear = () => store.sqlite.exec("DELETE FROM turn_log");

describeOnly("sqlite", "inWriteTurn", "drives the write turn over a bun:sqlite handle of its own", () => {
  it("runs the units asked for in one turn in one transaction, committed before any promise resolves", async () => {
    clear();
    let seenByOtherConnection: string[] = [];
    const first = inWriteTurn(store.db, () => {
      log("ingest");
      return "first";
    });
    const second = inWriteTurn(store.db, () => {
      log("pump");
      // Inside the same transaction: the first unit's row is written but not yet committed.
      seenByOtherConnection = committed();
      return store.sqlite.inTransaction;
    });
    expect(committed()).toEqual([]);
    await expect(first).resolves.toBe("first");
    await expect(second).resolves.toBe(true);
    expect(seenByOtherConnection).toEqual([]);
    expect(committed()).toEqual(["ingest", "pump"]);
  });

  it("rolls back a unit that throws, alone: its promise rejects and the others commit", async () => {
    clear();
    const ok = inWriteTurn(store.db, () => log("kept"));
    const failing = inWriteTurn(store.db, () => {
      log("rolled back");
      throw new Error("bad row");
    });
    const after = inWriteTurn(store.db, () => log("also kept"));
    await expect(failing).rejects.toThrow("bad row");
    await ok;
    await after;
    expect(committed()).toEqual(["kept", "also kept"]);
  });

  it("rolls back a unit alone in its turn when it throws, and rejects it", async () => {
    clear();
    await expect(
      inWriteTurn(store.db, () => {
        log("alone");
        throw new Error("bad row");
      }),
    ).rejects.toThrow("bad row");
    expect(committed()).toEqual([]);
    await inWriteTurn(store.db, () => log("next"));
    expect(committed()).toEqual(["next"]);
  });

  it("runs a write a unit asks for while it runs inside the unit's own transaction, committed with it", async () => {
    clear();
    let committedWhenInnerRan: string[] = ["not run"];
    await inWriteTurn(store.db, async () => {
      log("outer");
      // Awaited inside the turn: a later turn would wait for this one to end, so it joins it instead.
      await inWriteTurn(store.db, () => {
        committedWhenInnerRan = committed();
        log("inner");
      });
    });
    expect(committedWhenInnerRan).toEqual([]);
    expect(committed()).toEqual(["outer", "inner"]);
  });

  it("rejects every unit of the turn when its transaction cannot begin, and writes nothing", async () => {
    clear();
    const holder = new Database(store.path);
    holder.exec("BEGIN IMMEDIATE");
    store.sqlite.exec("PRAGMA busy_timeout = 0");
    try {
      const a = inWriteTurn(store.db, () => log("a"));
      const b = inWriteTurn(store.db, () => log("b"));
      await expect(a).rejects.toThrow(/locked|busy/i);
      await expect(b).rejects.toThrow(/locked|busy/i);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
      store.sqlite.exec("PRAGMA busy_timeout = 5000");
    }
    expect(committed()).toEqual([]);
    await inWriteTurn(store.db, () => log("after the lock"));
    expect(committed()).toEqual(["after the lock"]);
  });

  it("takes asynchronous work: what it awaits runs in the turn's transaction, rolled back when it throws", async () => {
    clear();
    await expect(
      inWriteTurn(store.db, async () => {
        log("before the await");
        await Promise.resolve();
        log("after the await");
        throw new Error("bad row");
      }),
    ).rejects.toThrow("bad row");
    expect(committed()).toEqual([]);
    await inWriteTurn(store.db, async () => {
      await Promise.resolve();
      log("async");
    });
    expect(committed()).toEqual(["async"]);
  });
});

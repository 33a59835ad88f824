import { Database } from "bun:sqlite";
import { count } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { beforeEach, describe, expect, it } from "vitest";
import { pageQuery, type PageQuery } from "../../src/contracts/pagination";
import { paginate } from "../../src/domain/paging";
import { describeOnly } from "../helpers/database";

const items = sqliteTable("items", { id: text("id").primaryKey(), t: text("t").notNull() });
let db: ReturnType<typeof drizzle>;

function insert(n: number, from = 0) {
  for (let i = from; i < from + n; i++) {
    // Pairs share a timestamp so ties are broken by id.
    const t = new Date(Date.UTC(2026, 0, 1, 0, 0, Math.floor(i / 2))).toISOString();
    db.insert(items).values({ id: `id${String(i).padStart(4, "0")}`, t }).run();
  }
}

function page(q: Record<string, string>) {
  const parsed: PageQuery = pageQuery.parse(q);
  return paginate({
    page: parsed,
    cols: { time: items.t, id: items.id },
    filters: undefined,
    select: (where, order, limit, offset) => db.select().from(items).where(where).orderBy(...order).limit(limit).offset(offset),
    total: async (where) => (await db.select({ n: count() }).from(items).where(where))[0]!.n,
    key: (r) => ({ t: r.t, id: r.id }),
  });
}

beforeEach(() => {
  const sqlite = new Database(":memory:");
  sqlite.exec("create table items (id text primary key, t text not null)");
  db = drizzle(sqlite);
});

describeOnly("sqlite", "limit and offset", "a unit test over an in-memory table; the API's list tests page on both stores", () => {
  it("defaults to 50 newest first and reports total and has_more", async () => {
    insert(120);
    const { rows, pagination } = await page({});
    expect(rows).toHaveLength(50);
    expect(rows[0]!.id).toBe("id0119");
    expect(pagination).toMatchObject({ total: 120, limit: 50, offset: 0, has_more: true, prev_cursor: null });
    expect(pagination.next_cursor).toEqual(expect.any(String));
  });

  it("skips offset rows and says when nothing more remains", async () => {
    insert(10);
    const { rows, pagination } = await page({ limit: "4", offset: "8" });
    expect(rows.map((r) => r.id)).toEqual(["id0001", "id0000"]);
    expect(pagination).toMatchObject({ total: 10, limit: 4, offset: 8, has_more: false, next_cursor: null });
  });

  it("returns an empty page past the end", async () => {
    insert(3);
    const { rows, pagination } = await page({ offset: "10" });
    expect(rows).toEqual([]);
    expect(pagination).toMatchObject({ total: 3, has_more: false, next_cursor: null, prev_cursor: null });
  });

  it("refuses limit outside 1..100, negative or non-numeric offsets", () => {
    for (const q of [{ limit: "0" }, { limit: "101" }, { limit: "-1" }, { limit: "abc" }, { limit: "1.5" }, { offset: "-1" }, { offset: "x" }]) {
      expect(pageQuery.safeParse(q).success, JSON.stringify(q)).toBe(false);
    }
    expect(pageQuery.parse({ limit: "100", offset: "0" })).toMatchObject({ limit: 100, offset: 0 });
  });
});

describeOnly("sqlite", "cursors", "a unit test over an in-memory table; the API's list tests page on both stores", () => {
  it("walks every row exactly once while new rows arrive at the head", async () => {
    insert(25);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let round = 0;
    do {
      const { rows, pagination } = await page(cursor ? { limit: "7", cursor } : { limit: "7" });
      seen.push(...rows.map((r) => r.id));
      cursor = pagination.next_cursor;
      insert(2, 1000 + round++ * 2); // newer rows must not shift the pages
    } while (cursor);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(seen[0]).toBe("id0024");
    expect(seen.at(-1)).toBe("id0000");
  });

  it("walks back with prev_cursor to the page before", async () => {
    insert(20);
    const first = await page({ limit: "5" });
    const second = await page({ limit: "5", cursor: first.pagination.next_cursor! });
    expect(second.pagination.prev_cursor).toEqual(expect.any(String));
    const back = await page({ limit: "5", cursor: second.pagination.prev_cursor! });
    expect(back.rows.map((r) => r.id)).toEqual(first.rows.map((r) => r.id));
  });

  it("refuses a cursor it did not make with a 400 validation_error", async () => {
    await expect(page({ cursor: "not-a-cursor" })).rejects.toMatchObject({ code: "validation_error", status: 400 });
  });
});

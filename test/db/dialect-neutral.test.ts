import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The seam of docs/decisions.md D12: outside src/db, code reads the same on SQLite and
 * PostgreSQL. What would tie it to one dialect (drizzle's synchronous forms,
 * raw bun:sqlite statements, SQLite's own SQL) is looked for in the source.
 */
const root = join(import.meta.dirname, "../..");
/** Every folder of src/ but the store itself and what the build generates. */
const areas = readdirSync(join(root, "src"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "db" && entry.name !== "generated")
  .map((entry) => `src/${entry.name}`);
/** serve.lock is an OS lock taken through a small SQLite file of its own, not the store. */
const allowed = new Set(["src/runtime/serverLock.ts"]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") || path.endsWith(".tsx") ? [path] : [];
  });
}

const rules: { what: string; pattern: RegExp }[] = [
  { what: "drizzle's synchronous forms (.run() / .all() / .get())", pattern: /\.(run|all|get)\(\s*(\)|\{)/ },
  { what: "the SQLite delivery statements", pattern: /\bdeliverySql\(/ },
  { what: "the synchronous SQLite transaction", pattern: /\bwriteTransaction\b/ },
  { what: "bun:sqlite handles", pattern: /from "bun:sqlite"|\bsqliteOf\(/ },
  { what: "rowid", pattern: /\browid\b/i },
  { what: "SQLite's own SQL", pattern: /json_each|INDEXED BY|CAST\(.*AS TEXT\)|strftime\(|julianday\(/i },
  { what: "a bare 0 as a condition", pattern: /sql`0`/ },
];

describe("domain code is dialect-neutral (docs/decisions.md D12)", () => {
  const sources = areas.flatMap((a) => files(join(root, a))).filter((f) => !allowed.has(relative(root, f)));

  it("finds the source files it checks", () => {
    expect(sources.length).toBeGreaterThan(50);
  });

  for (const rule of rules) {
    it(`uses no ${rule.what} outside src/db`, () => {
      const found = sources.flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .flatMap((line, i) => (rule.pattern.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
      );
      expect(found).toEqual([]);
    });
  }
});

describe("nothing outside src/db asks which dialect it runs on (docs/architecture.md)", () => {
  const asksDialect = /\bdialectOf\(|\.dialect\b|db\/dialect"/;
  const sources = [...areas, "cli"].flatMap((a) => files(join(root, a))).concat(join(root, "src/server.ts"));

  it("asks store.shared or for a capability instead", () => {
    const found = sources.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (asksDialect.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

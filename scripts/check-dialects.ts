/**
 * CI check that the two dialects cannot drift (`npm run db:check-dialects`):
 * the committed Postgres schema is what scripts/pg-schema.ts makes from the SQLite one,
 * and drizzle-kit finds nothing to migrate in either dialect's committed migrations.
 * drizzle-kit runs against temp copies, so it can never write into src/db.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { generatePgSchema, pgSchemaDir, PgSchemaError } from "./pg-schema";

// import.meta.dir is Bun-only; vitest imports this file too.
const root = fileURLToPath(new URL("..", import.meta.url));

/** Every file under dir, by path relative to it, with its text. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return files;
}

function differences(label: string, expected: Map<string, string>, actual: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [name, text] of expected) {
    if (!actual.has(name)) out.push(`${label}: ${name} is missing`);
    else if (actual.get(name) !== text) out.push(`${label}: ${name} differs`);
  }
  for (const name of actual.keys()) if (!expected.has(name)) out.push(`${label}: ${name} is unexpected`);
  return out;
}

export function checkPgSchema(): string[] {
  const committed = new Map([...snapshot(pgSchemaDir)].filter(([name]) => name.endsWith(".ts")));
  const fresh = generatePgSchema();
  return differences("src/db/pg/schema (run `npm run db:pg-schema`)", fresh, committed);
}

/** Runs `drizzle-kit generate` over a copy of the committed migrations; they must stay as they are. */
export function checkNoPendingMigration(dialect: "sqlite" | "postgresql", schema: string, migrations: string): string[] {
  const label = `${migrations} (${dialect})`;
  const work = mkdtempSync(join(tmpdir(), "hookrelay-dialects-"));
  try {
    cpSync(join(root, migrations), join(work, "out"), { recursive: true });
    const before = snapshot(join(work, "out"));
    // drizzle-kit resolves --out against its cwd (an absolute path breaks it), hence cwd: work.
    const run = Bun.spawnSync(
      [process.execPath, "--bun", join(root, "node_modules/.bin/drizzle-kit"), "generate",
        "--dialect", dialect, "--schema", join(root, schema), "--out", "./out"],
      { cwd: work, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 120_000 },
    );
    const output = (run.stdout.toString() + run.stderr.toString())
      .split("\n")
      .filter((line) => !/^(\d+ tables|\w+ \d+ columns \d+ indexes \d+ fks)$/.test(line.trim()))
      .join("\n");
    // drizzle-kit exits 0 even when it fails, so its own words and the files decide.
    if (run.exitCode !== 0 || !output.includes("No schema changes, nothing to migrate")) {
      return [`${label}: drizzle-kit generate found changes to ${schema} or failed; regenerate the migrations:\n${output.trim()}`];
    }
    return differences(label, before, snapshot(join(work, "out")));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  let problems: string[];
  try {
    problems = [
      ...checkPgSchema(),
      ...checkNoPendingMigration("sqlite", "src/db/schema/index.ts", "src/db/migrations"),
      ...checkNoPendingMigration("postgresql", "src/db/pg/schema/index.ts", "src/db/pg/migrations"),
    ];
  } catch (err) {
    if (!(err instanceof PgSchemaError)) throw err;
    problems = [`scripts/pg-schema.ts: ${err.message}`];
  }
  if (problems.length > 0) {
    console.error("db:check-dialects: the schema and its migrations disagree (docs/postgres.md):");
    for (const p of problems) console.error(`  - ${p}`);
    process.exit(1);
  }
  console.log("db:check-dialects: the Postgres schema and both migration sets match src/db/schema");
}

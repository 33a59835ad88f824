/**
 * What the portable archive costs (docs/performance.md, "Portable archive"):
 * the 0.1.0 fixture with N copies of its event added, written to an archive
 * from a snapshot, then restored into a new data dir (the whole file checked
 * first, loaded, read back and checked, copied into place). Run:
 * N=100000 bun scripts/bench-portable.ts
 */
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../src/core/clock";
import { openStore } from "../src/db/openStore";
import { writeArchive } from "../src/db/portable/archive";
import { readStore } from "../src/db/portable/reader";
import { withSnapshot } from "../src/db/portable/snapshot";
import { restorePortableBackup } from "../src/domain/portableRestore";
import { parseStoreLocation } from "../src/domain/storeLocation";

const N = Number(process.env.N ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), "hookrelay-bench-portable-"));
const targetDir = mkdtempSync(join(tmpdir(), "hookrelay-bench-portable-target-"));
try {
  copyFileSync(join(import.meta.dirname, "../test/fixtures/db/0.1.0.db"), join(dir, "hookrelay.db"));
  // Opening migrates the fixture forward; the copies are made with SQL after.
  await (await openStore({ dataDir: dir })).close();
  const db = new Database(join(dir, "hookrelay.db"));
  const columns = (db.query("SELECT name FROM pragma_table_info('events')").all() as { name: string }[]).map((c) => c.name);
  const first = (db.query("SELECT id FROM events LIMIT 1").get() as { id: string }).id;
  db.exec("BEGIN");
  const copy = db.prepare(`INSERT INTO events (${columns.join(", ")}) SELECT ${columns.map((c) => (c === "id" ? "?1" : c)).join(", ")} FROM events WHERE id = ?2`);
  for (let i = 0; i < N; i++) copy.run(`evt_bench_${i}`, first);
  copy.finalize();
  db.exec("COMMIT");
  db.close();

  const store = await openStore({ dataDir: dir });
  const file = join(dir, "bench.hrbk");
  let started = performance.now();
  await withSnapshot(store, (snapshot) => writeArchive(readStore(snapshot, new Date()), file));
  const writeMs = performance.now() - started;
  await store.close();
  started = performance.now();
  const marks: [string, number][] = [];
  const result = await restorePortableBackup(parseStoreLocation(targetDir, "target"), file, systemClock, (line) => marks.push([line, performance.now() - started]));
  const restoreMs = performance.now() - started;
  const loaded = marks.find(([line]) => line.startsWith("verifying"))?.[1] ?? restoreMs;
  const checked = marks.find(([line]) => line.startsWith("[1/"))?.[1] ?? 0;
  console.log(`rows ${result.rows}, archive ${statSync(file).size} bytes`);
  console.log(`write the archive      ${writeMs.toFixed(0).padStart(7)} ms  ${((result.rows / writeMs) * 1000).toFixed(0).padStart(7)} rows/s`);
  console.log(`restore (all of it)    ${restoreMs.toFixed(0).padStart(7)} ms  ${((result.rows / restoreMs) * 1000).toFixed(0).padStart(7)} rows/s`);
  console.log(`  check the file        ${checked.toFixed(0).padStart(6)} ms`);
  console.log(`  load                  ${(loaded - checked).toFixed(0).padStart(6)} ms  ${((result.rows / (loaded - checked)) * 1000).toFixed(0).padStart(7)} rows/s`);
  console.log(`  read back and place   ${(restoreMs - loaded).toFixed(0).padStart(6)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
  rmSync(targetDir, { recursive: true, force: true });
}

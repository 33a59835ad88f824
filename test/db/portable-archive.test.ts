import { gunzipSync, gzipSync } from "node:zlib";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { AppError } from "../../src/contracts/errors";
import { systemClock } from "../../src/core/clock";
import { readArchive, writeArchive } from "../../src/db/portable/archive";
import { digestStore, readStore } from "../../src/db/portable/reader";
import { withSnapshot } from "../../src/db/portable/snapshot";
import { binarySchemaLevel, PORTABLE_TABLES } from "../../src/db/portable/tables";
import { openStore } from "../../src/db/openStore";
import { attemptCounts, eventCounts, events } from "../../src/db/schema";
import { restorePortableBackup } from "../../src/domain/portableRestore";
import { parseStoreLocation, type StoreLocation } from "../../src/domain/storeLocation";
import { emptyDatabaseUrl, onPostgres } from "../helpers/database";
import { pipeline, sendEvent, waitFor, listAttempts } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { call, tempDir, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";

/**
 * The portable archive (src/db/portable/, docs/operations.md "Backups"):
 * what a populated store writes is what a fresh store of the same kind
 * holds after loading it, table by table; a damaged, truncated or newer
 * archive is refused with what is wrong, before anything changes.
 */
let server: TestServer, key: string, sink: Sink;
const backupDir = tempDir("hookrelay-backups-");
useServer({ sink: true, env: { HOOKRELAY_BACKUP_DIR: backupDir } }, (s) => ({ server, key, sink } = s));

/** A fresh, empty target of the run's kind: a new data dir, or a new PostgreSQL database. */
async function freshTarget(): Promise<StoreLocation> {
  return parseStoreLocation(onPostgres ? await emptyDatabaseUrl() : tempDir("hookrelay-restore-"), "target");
}

async function archiveOfServer(): Promise<string> {
  const file = join(tempDir("hookrelay-archive-"), "backup.hrbk");
  await withSnapshot(server.store, (snapshot) => writeArchive(readStore(snapshot, new Date()), file));
  return file;
}

/** The archive's lines, to damage on purpose. */
function linesOf(file: string): string[] {
  return gunzipSync(readFileSync(file)).toString("utf8").trimEnd().split("\n");
}

function rewrite(file: string, lines: string[]): string {
  const out = file.replace(/\.hrbk$/, `-${Math.random().toString(36).slice(2)}.hrbk`);
  writeFileSync(out, gzipSync(lines.join("\n") + "\n"));
  return out;
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

const BINARY_BODY = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41, 0x0a, 0x00]);

describe("a populated store written to an archive and loaded into a fresh one", () => {
  let file: string;
  let target: StoreLocation;

  it("round-trips every table: same counts and checksums, ids and byte-exact bodies kept", async () => {
    const p = await pipeline(server, key, { url: sink.url });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await sendEvent(server, p.sourceId, { n: i }));
    const res = await server.request(`/v1/ingest/${p.sourceId}`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: BINARY_BODY });
    const binaryId = ((await res.json()) as { event_id: string }).event_id;
    await waitFor(async () => (await listAttempts(server, key)).length >= 5 || null, { what: "deliveries" });

    file = await archiveOfServer();
    target = await freshTarget();
    const result = await restorePortableBackup(target, file, systemClock);
    expect(result.rows).toBeGreaterThan(10);

    const store = await openStore({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
    try {
      // The server goes on (heartbeats, deliveries): what the target must equal is the archive, as of its snapshot.
      const manifest = (JSON.parse(linesOf(file).at(-1)!) as { manifest: Record<string, unknown> }).manifest;
      const got = await withSnapshot(store, (s) => digestStore(s));
      expect(got).toEqual(manifest);
      const live = await withSnapshot(server.store, (s) => digestStore(s, new Set(["organizations", "environments", "users"])));
      for (const [name, summary] of Object.entries(live)) expect([name, got[name]]).toEqual([name, summary]);
      expect(got.events!.rows).toBe(6);
      expect(got.delivery_attempts!.rows).toBeGreaterThanOrEqual(5);
      const [stored] = await store.db.select({ body: events.body }).from(events).where(eq(events.id, binaryId));
      expect(Buffer.from(stored!.body as Uint8Array).equals(BINARY_BODY)).toBe(true);
      expect(ids.length).toBe(5);
      // The list counters are not in the archive: the triggers counted the rows again as they loaded.
      expect(got.event_counts).toBeUndefined();
      const [counted] = await store.db.select({ n: sql<number>`coalesce(sum(${eventCounts.n}), 0)` }).from(eventCounts);
      expect(Number(counted!.n)).toBe(6);
      const [attempted] = await store.db.select({ a: sql<number>`coalesce(sum(${attemptCounts.n}), 0)` }).from(attemptCounts);
      expect(Number(attempted!.a)).toBe(got.delivery_attempts!.rows);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("writes a manifest whose counts and checksums match each table's rows", async () => {
    const manifest = JSON.parse(linesOf(file).at(-1)!) as { manifest: Record<string, { rows: number; sha256: string }> };
    expect(Object.keys(manifest.manifest).sort()).toEqual(PORTABLE_TABLES.map((t) => t.name).sort());
    let header: any = null;
    const seen: Record<string, { rows: number; sha256: string }> = {};
    for await (const item of readArchive(file)) {
      if (item.kind === "header") header = item.header;
      if (item.kind === "table_end") seen[item.table] = item.summary;
    }
    expect(seen).toEqual(manifest.manifest);
    expect(header.schema).toEqual(binarySchemaLevel());
    expect(header.source).toBe(onPostgres ? "postgres" : "sqlite");
  });

  it("refuses to load into a store that holds data", async () => {
    if (!onPostgres) {
      // A data dir's database is replaced, as a restore of a SQLite copy does; the one replaced is kept.
      const dir = await freshTarget();
      await restorePortableBackup(dir, file, systemClock);
      const again = await restorePortableBackup(dir, file, systemClock);
      expect(again.replaced_database_kept_as).not.toBeNull();
      expect(existsSync(again.replaced_database_kept_as!)).toBe(true);
      return;
    }
    const error = await refusal(restorePortableBackup(target, file, systemClock));
    expect(error.status).toBe(409);
    expect(error.message).toContain("holds data");
  }, 60_000);
});

describe("a damaged archive is refused before anything changes", () => {
  let file: string;
  it("a truncated file: says it is truncated or incomplete", async () => {
    file = await archiveOfServer();
    const bytes = readFileSync(file);
    const cut = file.replace(/\.hrbk$/, "-cut.hrbk");
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const target = await freshTarget();
    const error = await refusal(restorePortableBackup(target, cut, systemClock));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/truncated|incomplete/);
    if (!onPostgres) expect(existsSync(join(target.dataDir, "hookrelay.db"))).toBe(false);
  });

  it("a row changed inside: says which table does not match its checksum", async () => {
    const lines = linesOf(file);
    const start = lines.findIndex((l) => l === JSON.stringify({ table: "sources" }));
    const row = JSON.parse(lines[start + 1]!) as unknown[];
    row[row.length - 1] = "tampered";
    lines[start + 1] = JSON.stringify(row);
    const error = await refusal(restorePortableBackup(await freshTarget(), rewrite(file, lines), systemClock));
    expect(error.status).toBe(400);
    expect(error.message).toContain("table sources does not match its checksum");
  });

  it("a file that is no archive: says so", async () => {
    const other = join(tempDir("hookrelay-archive-"), "notes.hrbk");
    writeFileSync(other, "just some text\n");
    const error = await refusal(restorePortableBackup(await freshTarget(), other, systemClock));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/truncated or corrupt|not a hookrelay archive/);
    // A header that claims the format but lists its tables wrongly: a clear refusal, not a crash.
    const forged = join(tempDir("hookrelay-archive-"), "forged.hrbk");
    writeFileSync(forged, gzipSync(JSON.stringify({ format: "hookrelay-portable", tables: [null, 3] }) + "\n"));
    const malformed = await refusal(restorePortableBackup(await freshTarget(), forged, systemClock));
    expect(malformed.status).toBe(400);
    expect(malformed.message).toContain("malformed");
  });

  it("an archive made at a newer schema level than this binary's: refused, naming the release to use", async () => {
    const lines = linesOf(file);
    const header = JSON.parse(lines[0]!);
    header.schema.level += 1;
    header.hookrelay_version = "9.9.9";
    lines[0] = JSON.stringify(header);
    const error = await refusal(restorePortableBackup(await freshTarget(), rewrite(file, lines), systemClock));
    expect(error.status).toBe(409);
    expect(error.message).toContain("made by hookrelay 9.9.9");
    expect(error.message).toContain("that release or a later one");
  });

  it("the API makes a portable backup into HOOKRELAY_BACKUP_DIR, lists it and serves it for download", async () => {
    const made = await call(server, "POST", "/v1/backups?format=portable", { key });
    expect(made.status).toBe(201);
    expect(made.body.backup).toMatchObject({ kind: "manual", format: "portable" });
    expect(made.body.backup.name).toMatch(/\.hrbk$/);
    expect(existsSync(join(backupDir, made.body.backup.name))).toBe(true);
    const list = await call(server, "GET", "/v1/backups", { key });
    expect(list.body.backups.map((b: { name: string; format: string }) => [b.name, b.format])).toContainEqual([made.body.backup.name, "portable"]);
    const download = await server.request(`/v1/backups/${made.body.backup.name}`, { headers: { "x-api-key": key } });
    expect(download.headers.get("content-type")).toBe("application/gzip");
    const target = await freshTarget();
    const restored = join(tempDir("hookrelay-archive-"), "download.hrbk");
    writeFileSync(restored, Buffer.from(await download.arrayBuffer()));
    expect((await restorePortableBackup(target, restored, systemClock)).rows).toBeGreaterThan(10);
    // A copy of the SQLite file is the default where the store is one, and refused where it is not.
    const plain = await call(server, "POST", "/v1/backups?format=sqlite", { key });
    if (onPostgres) {
      expect(plain.status).toBe(409);
      expect(plain.body.error.message).toContain("format=portable");
    } else expect(plain.body.backup).toMatchObject({ format: "sqlite" });
    expect((await call(server, "POST", "/v1/backups?format=zip", { key })).status).toBe(400);
  });
});

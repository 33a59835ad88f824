import { createReadStream, createWriteStream, fsyncSync, openSync, closeSync, renameSync, rmSync } from "node:fs";
import { once } from "node:events";
import { StringDecoder } from "node:string_decoder";
import { createGunzip, createGzip } from "node:zlib";
import { ArchiveFormatError, TableDigest, type TableSummary } from "./codec";
import { ARCHIVE_FORMAT, type ArchiveHeader, type PortableItem } from "./reader";

/**
 * The portable archive file (docs/operations.md, "Backups"): one gzip'd
 * stream of JSON lines. The first line is the header (format, versions,
 * schema level, source store, every table's columns); then for each table
 * a `{"table":…}` line, its rows (one JSON array each, codec.ts), and a
 * `{"end":…,"rows":…,"sha256":…}` line; the last line is the manifest with
 * every table's count and checksum. A file without that last line is
 * incomplete, and reading it says so.
 */
export const ARCHIVE_EXTENSION = ".hrbk";

/** Lines longer than this are refused rather than held: far above any row a server accepts. */
const MAX_LINE_CHARS = 512 * 1024 * 1024;

/** Writes the stream to `file`; it appears under that name only once complete and on disk. */
export async function writeArchive(items: AsyncIterable<PortableItem>, file: string): Promise<void> {
  const partial = `${file}.partial-${process.pid}-${Date.now()}`;
  const out = createWriteStream(partial, { mode: 0o600 });
  const gzip = createGzip({ level: 6 });
  gzip.pipe(out);
  const failed = new Promise<never>((_, reject) => {
    gzip.on("error", reject);
    out.on("error", reject);
  });
  failed.catch(() => {});
  const write = async (line: string) => {
    if (!gzip.write(line + "\n")) await Promise.race([once(gzip, "drain"), failed]);
  };
  try {
    for await (const item of items) {
      switch (item.kind) {
        case "header":
          await write(JSON.stringify(item.header));
          break;
        case "table":
          await write(JSON.stringify({ table: item.table }));
          break;
        case "rows":
          // What the reader would refuse is never written: a backup that cannot be restored is worse than none.
          if (item.lines.some((line) => line.length > MAX_LINE_CHARS)) throw new Error(`a row of ${item.table} is over ${MAX_LINE_CHARS} characters as JSON: too large for a portable archive`);
          if (item.lines.length > 0) await write(item.lines.join("\n"));
          break;
        case "table_end":
          await write(JSON.stringify({ end: item.table, ...item.summary }));
          break;
        case "end":
          await write(JSON.stringify({ manifest: item.tables }));
          break;
      }
    }
    gzip.end();
    await Promise.race([once(out, "close"), failed]);
    const fd = openSync(partial, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, file);
  } finally {
    gzip.destroy();
    out.destroy();
    rmSync(partial, { force: true });
  }
}

/** The file's lines, decompressed as they are read; a damaged gzip stream is one clear error. */
async function* linesOf(file: string): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  const raw = createReadStream(file);
  const stream = createGunzip();
  raw.on("error", (error) => stream.destroy(error));
  raw.pipe(stream);
  try {
    for await (const chunk of stream) {
      rest += decoder.write(chunk as Buffer);
      // Lines are cut by position, and the tail kept once per chunk: no copy of the rest per line.
      let from = 0;
      let nl: number;
      while ((nl = rest.indexOf("\n", from)) >= 0) {
        yield rest.slice(from, nl);
        from = nl + 1;
      }
      rest = rest.slice(from);
      if (rest.length > MAX_LINE_CHARS) throw new ArchiveFormatError(`${file}: a line longer than ${MAX_LINE_CHARS} characters: not a hookrelay archive`);
    }
  } catch (error) {
    if (error instanceof ArchiveFormatError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new ArchiveFormatError(`${file} is truncated or corrupt (${why}): not a complete hookrelay archive`);
  } finally {
    stream.destroy();
    raw.destroy();
  }
  rest += decoder.end();
  if (rest.length > 0) yield rest;
}

function parseObject(line: string, file: string, what: string): Record<string, unknown> {
  try {
    const v = JSON.parse(line) as unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {}
  throw new ArchiveFormatError(`${file}: expected ${what}, found something else: not a hookrelay archive, or a damaged one`);
}

/** Rows handed on at once: at most this many, and not many more characters than this (request bodies can be large). */
const ROWS_PER_ITEM = 500;
const CHARS_PER_ITEM = 8 * 1024 * 1024;

/**
 * Reads an archive back as the stream it was written from, checking as it
 * goes: the header first, each table's rows against the count and checksum
 * at its end, the manifest last. Anything else is an ArchiveFormatError that
 * names the file and what is wrong. The header's compatibility with this
 * binary is the caller's check (compat.ts).
 */
export async function* readArchive(file: string): AsyncGenerator<PortableItem> {
  const lines = linesOf(file);
  const first = await lines.next();
  if (first.done) throw new ArchiveFormatError(`${file} is empty: not a hookrelay archive`);
  const header = parseObject(first.value, file, "the archive's header");
  if (header.format !== ARCHIVE_FORMAT || !Array.isArray(header.tables)) throw new ArchiveFormatError(`${file} is not a hookrelay archive (no ${ARCHIVE_FORMAT} header)`);
  yield { kind: "header", header: header as unknown as ArchiveHeader };
  const expected = (header.tables as unknown[]).map((t) => (t && typeof t === "object" ? (t as { name?: unknown }).name : undefined));
  if (!expected.every((name): name is string => typeof name === "string")) throw new ArchiveFormatError(`${file}: the header's table list is malformed: not a hookrelay archive, or a damaged one`);
  const summaries: Record<string, TableSummary> = {};
  let table: string | null = null;
  let digest = new TableDigest();
  let batch: string[] = [];
  let batchChars = 0;
  let next = 0;
  for await (const line of lines) {
    if (line.startsWith("[")) {
      if (table === null) throw new ArchiveFormatError(`${file}: a row outside any table`);
      digest.add(line);
      batch.push(line);
      batchChars += line.length;
      if (batch.length >= ROWS_PER_ITEM || batchChars >= CHARS_PER_ITEM) {
        yield { kind: "rows", table, lines: batch };
        batch = [];
        batchChars = 0;
      }
      continue;
    }
    const marker = parseObject(line, file, "a table marker");
    if (typeof marker.table === "string") {
      if (table !== null) throw new ArchiveFormatError(`${file}: table ${marker.table} starts before ${table} ends`);
      if (marker.table !== expected[next]) throw new ArchiveFormatError(`${file}: found table ${marker.table} where the header lists ${expected[next] ?? "no more tables"}`);
      table = marker.table;
      digest = new TableDigest();
      yield { kind: "table", table };
    } else if (typeof marker.end === "string") {
      if (marker.end !== table) throw new ArchiveFormatError(`${file}: end of ${marker.end} inside ${table ?? "no table"}`);
      if (batch.length > 0) yield { kind: "rows", table, lines: batch };
      batch = [];
      batchChars = 0;
      if (marker.rows !== digest.rows || marker.sha256 !== digest.sha256) {
        throw new ArchiveFormatError(`${file}: table ${table} does not match its checksum (${digest.rows} rows read, ${String(marker.rows)} written): the archive is damaged`);
      }
      summaries[table] = digest.summary();
      yield { kind: "table_end", table, summary: digest.summary() };
      table = null;
      next++;
    } else if (marker.manifest && typeof marker.manifest === "object") {
      if (table !== null || next !== expected.length) throw new ArchiveFormatError(`${file}: the manifest comes before every table is complete`);
      const manifest = marker.manifest as Record<string, TableSummary>;
      for (const name of expected) {
        if (manifest[name]?.rows !== summaries[name]!.rows || manifest[name]?.sha256 !== summaries[name]!.sha256) throw new ArchiveFormatError(`${file}: the manifest disagrees with table ${name}: the archive is damaged`);
      }
      yield { kind: "end", tables: summaries };
      if (!(await lines.next()).done) throw new ArchiveFormatError(`${file}: data after the manifest: the archive is damaged`);
      return;
    } else {
      throw new ArchiveFormatError(`${file}: an unknown line in the archive`);
    }
  }
  throw new ArchiveFormatError(`${file} is incomplete: it ends ${table === null ? "before its manifest" : `inside table ${table}`} (an interrupted write, or a truncated copy)`);
}

/** Reads the whole archive once, checking every table; answers its header and summaries (before anything is loaded from it). */
export async function verifyArchive(file: string): Promise<{ header: ArchiveHeader; tables: Record<string, TableSummary> }> {
  let header: ArchiveHeader | null = null;
  for await (const item of readArchive(file)) {
    if (item.kind === "header") header = item.header;
    if (item.kind === "end") return { header: header!, tables: item.tables };
  }
  throw new ArchiveFormatError(`${file} is incomplete`);
}

/** Whether a file starts like a gzip stream (a portable archive) rather than a SQLite database. */
export function looksLikeArchive(firstBytes: Uint8Array): boolean {
  return firstBytes[0] === 0x1f && firstBytes[1] === 0x8b;
}

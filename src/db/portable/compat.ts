import { ArchiveFormatError } from "./codec";
import { ARCHIVE_FORMAT_VERSION, type ArchiveHeader } from "./reader";
import { binarySchemaLevel, PORTABLE_TABLES } from "./tables";

/** An archive this binary cannot load: made by a newer release, or at another schema level. */
export class ArchiveVersionError extends Error {
  override name = "ArchiveVersionError";
}

/**
 * Whether this binary can load an archive: the same format (or an older one
 * it reads), and the same schema level. A target is always at this binary's
 * level once opened (opening migrates), so an archive of a newer level could
 * not fit, and one of an older level would skip the data changes its
 * migrations made: restore it with the release that made it, then move it
 * on with this one (docs/operations.md, "Moving between stores").
 */
export function checkHeader(header: ArchiveHeader, where: string): void {
  const binary = binarySchemaLevel();
  const made = `made by hookrelay ${String(header.hookrelay_version)}`;
  if (typeof header.format_version !== "number" || header.format_version > ARCHIVE_FORMAT_VERSION) {
    throw new ArchiveVersionError(`${where} was ${made} in archive format ${String(header.format_version)}; this binary reads format ${ARCHIVE_FORMAT_VERSION}: restore it with that release or a later one`);
  }
  const level = header.schema?.level;
  if (typeof level !== "number") throw new ArchiveFormatError(`${where}: the header has no schema level`);
  if (level > binary.level) {
    throw new ArchiveVersionError(`${where} was ${made} at schema level ${level}; this binary is at level ${binary.level}: restore it with that release or a later one`);
  }
  if (level < binary.level) {
    throw new ArchiveVersionError(`${where} was ${made} at schema level ${level}; this binary is at level ${binary.level}: restore it with that release, start it once, then move it here with this one`);
  }
  if (header.schema.newest !== binary.newest) {
    throw new ArchiveVersionError(`${where} was ${made} with a schema this binary does not know (level ${level}, ${String(header.schema.newest)}; this binary has ${binary.newest}): restore it with the release that made it`);
  }
  const expected = PORTABLE_TABLES.map((t) => `${t.name}(${t.columns.map((c) => `${c.name}:${c.kind}`).join(",")})`).join(" ");
  if (describeTables(header.tables) !== expected) throw new ArchiveFormatError(`${where}: its tables and columns differ from this binary's schema at the same level: the archive is damaged`);
}

/** The header's tables in the form the binary's are compared in; anything malformed reads as no match. */
function describeTables(tables: unknown): string | null {
  if (!Array.isArray(tables)) return null;
  const out: string[] = [];
  for (const t of tables as { name?: unknown; columns?: unknown }[]) {
    if (!t || typeof t.name !== "string" || !Array.isArray(t.columns)) return null;
    const columns: string[] = [];
    for (const c of t.columns as unknown[]) {
      if (!Array.isArray(c) || typeof c[0] !== "string" || typeof c[1] !== "string") return null;
      columns.push(`${c[0]}:${c[1]}`);
    }
    out.push(`${t.name}(${columns.join(",")})`);
  }
  return out.join(" ");
}

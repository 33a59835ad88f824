import { z } from "zod";

/**
 * Backups of the whole instance (`/v1/backups`): the instance's owner only
 * (its session, or its keys with scope `*`). No server path is answered: a
 * backup is named, and downloaded by its name.
 */

export const backupItem = z.object({
  name: z.string().describe("File name in the backup dir (HOOKRELAY_BACKUP_DIR, by default <data-dir>/backups), e.g. hookrelay-2026-01-31T02-00-00-000Z.db or …Z.hrbk"),
  kind: z.enum(["manual", "scheduled"]).describe("scheduled: made by HOOKRELAY_BACKUP_INTERVAL and deleted beyond HOOKRELAY_BACKUP_KEEP; manual backups are never deleted by the server"),
  format: z.enum(["sqlite", "portable"]).describe("sqlite: a copy of the SQLite file (.db, VACUUM INTO); portable: the archive either store restores (.hrbk, docs/operations.md)"),
  size_bytes: z.number().int(),
  created_at: z.string().describe("When the snapshot was taken (ISO 8601, UTC)"),
});

export const backupBody = z.object({ backup: backupItem });
export const backupListBody = z.object({ backups: z.array(backupItem) });

export const createBackupQuery = z.object({
  format: z.enum(["sqlite", "portable"]).optional().describe("portable: the archive either store restores; the default on SQLite is a copy of the file, and on PostgreSQL the only form is portable"),
});

export const backupNameParam = z.object({ name: z.string() });

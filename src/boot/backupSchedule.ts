import { runScheduledBackup } from "../domain/backups";
import type { BackgroundContext } from "../runtime/context";
import { every, type BackgroundTask } from "../core/tasks";

/**
 * Scheduled backups (HOOKRELAY_BACKUP_INTERVAL, off by default). The check
 * runs twice a second and costs a directory listing; whether a backup is due
 * is the injected clock's call, so a test moves the clock instead of waiting.
 */
export const BACKUP_CHECK_MS = 500;

export function startBackupSchedule({ deps, config, logger }: BackgroundContext): BackgroundTask[] {
  const intervalMs = config.backupInterval;
  if (intervalMs === undefined) return [];
  return [
    every(
      "scheduled-backups",
      BACKUP_CHECK_MS,
      async () => {
        const backup = await runScheduledBackup(deps, { intervalMs, keep: config.backupKeep });
        if (backup) logger.info("scheduled backup written", { path: backup.path, size_bytes: backup.size_bytes });
      },
      logger,
    ),
  ];
}

import type { MiddlewareHandler } from "hono";
import { backupBody, backupListBody, backupNameParam, createBackupQuery } from "../../contracts/backups";
import { AppError } from "../../contracts/errors";
import { backupView, createBackup, findBackup, listBackups, requireBackupDir } from "../../domain/backups";
import { instanceOwnerOnly } from "../middleware/auth";
import { operation, responses, type Api, type ApiEnv } from "../openapi";

/** A backup holds every org's data: besides being the owner's, keys with scope `*` and sessions only, even to list or download. */
const fullScopeOnly: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (c.get("scope").scopes !== "*") throw new AppError("forbidden", "Backups need an API key with scope * (or a session)");
  return next();
};

/** Who may: the instance's owner (a backup is every organization's data), with scope `*`. */
const ownerWithFullScope = [instanceOwnerOnly, fullScopeOnly];

export function registerBackupRoutes(api: Api) {
  operation(
    api,
    {
      tags: ["backups"],
      method: "post",
      path: "/backups",
      middleware: ownerWithFullScope,
      summary: "Back up the database now into the backup dir (a consistent snapshot: SQLite's VACUUM INTO, or a portable archive); ingest and deliveries go on meanwhile",
      request: { query: createBackupQuery },
      responses: responses({ status: 201, schema: backupBody }, [400, 401, 403, 409]),
    },
    async (c, { query }) => c.json({ backup: backupView((await createBackup(c.get("deps"), "manual", c.get("scope"), { format: query.format })).backup) }, 201),
  );

  operation(
    api,
    {
      tags: ["backups"],
      method: "get",
      path: "/backups",
      middleware: ownerWithFullScope,
      summary: "Backups in the backup dir, newest first (both formats)",
      responses: responses({ status: 200, schema: backupListBody }, [401, 403, 409]),
    },
    async (c) => {
      return c.json({ backups: listBackups(requireBackupDir(c.get("deps"))).backups.map(backupView) }, 200);
    },
  );

  api.openAPIRegistry.registerPath({
    tags: ["backups"],
    method: "get",
    path: "/backups/{name}",
    summary: "Download a backup (the SQLite file or the portable archive; the instance's owner only)",
    request: { params: backupNameParam },
    // The error statuses as every operation documents them; the success is the file, not JSON.
    responses: { ...responses({ status: 200, schema: backupBody }, [401, 403, 404, 409]), 200: { description: "The backup file", content: { "application/vnd.sqlite3": { schema: { type: "string", format: "binary" } }, "application/gzip": { schema: { type: "string", format: "binary" } } } } },
  });
  api.get("/backups/:name", instanceOwnerOnly, fullScopeOnly, (c) => {
    const backup = findBackup(requireBackupDir(c.get("deps")), c.req.param("name"));
    return c.body(Bun.file(backup.path).stream(), 200, {
      "content-type": backup.format === "portable" ? "application/gzip" : "application/vnd.sqlite3",
      "content-length": String(backup.size_bytes),
      "content-disposition": `attachment; filename="${backup.name}"`,
    });
  });
}

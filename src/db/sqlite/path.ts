import { join } from "node:path";

/** The one SQLite file of a data dir. Its own module, so asking where it is loads no driver (src/boot/firstStart.ts). */
export function databasePath(dataDir: string) {
  return join(dataDir, "hookrelay.db");
}

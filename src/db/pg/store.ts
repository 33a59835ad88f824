import { DatabaseUnavailable, redactedUrl, type DialectStatements, type DialectStore } from "../store";
import { stopCounters } from "./counters";
import { pgIngestSql } from "./ingestSql";
import { pgQueue } from "./queue";
import { pgRoutingSql } from "./routingSql";
import { openPgSnapshot } from "./snapshot";

export const pgStatements: DialectStatements = {
  queue: pgQueue,
  routing: pgRoutingSql,
  ingestSql: pgIngestSql,
  // Autovacuum gives PostgreSQL's free space back: nothing to do here.
  reclaimFreePages: async () => 0,
};

/** A readiness probe must answer while the server is down, not after the client's connect timeout. */
const PING_TIMEOUT_MS = 2000;

/** The PostgreSQL database at `url`, which several nodes may share. */
export async function openPgStore(url: string): Promise<DialectStore> {
  // Loaded only when a database URL is given: a SQLite serve never needs the driver.
  const { openPostgres } = await import("./open");
  const pg = await openPostgres(url);
  return {
    ...pgStatements,
    dialect: "postgres",
    db: pg.db,
    shared: true,
    pg: { client: pg.client },
    location: redactedUrl(url),
    snapshot: () => openPgSnapshot(pg.client),
    async ping() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DatabaseUnavailable("the database did not answer within 2 s")), PING_TIMEOUT_MS);
      });
      try {
        await Promise.race([pg.client`SELECT 1`, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      // A clean stop loses no counts (src/db/pg/counters.ts).
      await stopCounters(pg.db).catch(() => {});
      await pg.close();
    },
  };
}

import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";

/**
 * The `serve` processes sharing this database (docs/scaling.md). Each
 * process writes its row at start-up and a heartbeat every few seconds; a
 * row whose heartbeat is late belongs to a node that is gone, and the
 * deliveries it had claimed go back to the queue.
 */
export const nodes = sqliteTable(
  "nodes",
  {
    /** `node_` + 32 hex characters, new for every start of a process. */
    id: text("id").primaryKey(),
    version: text("version").notNull(),
    hostname: text("hostname").notNull(),
    pid: integer("pid").notNull(),
    /** Where the node answers HTTP (its base URL, or host:port). */
    address: text("address").notNull(),
    startedAt: text("started_at").notNull(),
    lastHeartbeatAt: text("last_heartbeat_at").notNull(),
    /** When the node stopped cleanly; null while it runs (or if it died). */
    stoppedAt: text("stopped_at"),
  },
  (t) => [index("nodes_heartbeat").on(t.lastHeartbeatAt)],
);

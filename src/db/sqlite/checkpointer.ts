import type { Database } from "bun:sqlite";
import type { Logger } from "../../observability/logger";

/**
 * WAL checkpoints on a thread of their own, for `serve`.
 *
 * SQLite's automatic checkpoint runs inside whichever COMMIT pushes the WAL
 * past 1000 pages: that commit then copies the WAL into the database file and
 * fsyncs both, on the one JavaScript thread that also answers ingest and
 * runs deliveries (measured: about 40% of all commit time under load). Here a
 * Worker with its own connection runs a PASSIVE checkpoint (it never blocks
 * writers or readers, and costs next to nothing when the WAL holds nothing
 * new) every `intervalMs`, and the serving connection
 * keeps an automatic checkpoint only as a backstop at BACKSTOP_PAGES, should
 * the thread fall behind or fail.
 *
 * The worker is a Blob module so it is the same code from sources and inside
 * the compiled binary (no second entrypoint to build).
 */
export const BACKSTOP_PAGES = 10_000;

export interface Checkpointer {
  /** Closes the thread's connection; the serving connection must close after this, so its close can remove the WAL. */
  stop(): Promise<void>;
}

const WORKER_SOURCE = `
import { Database } from "bun:sqlite";
let db = null;
let timer = null;
self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "open") {
    db = new Database(m.path);
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA synchronous = " + m.synchronous);
    timer = setInterval(() => {
      try {
        db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
      } catch (err) {
        postMessage({ type: "error", message: String((err && err.message) || err) });
      }
    }, m.intervalMs);
    return;
  }
  if (m.type === "close") {
    if (timer) clearInterval(timer);
    try {
      if (db) db.close();
    } catch {}
    postMessage({ type: "closed" });
  }
};
`;

/** SQLite's own threshold, back in force whenever the thread cannot do the work. */
const SQLITE_DEFAULT_PAGES = 1000;

export function startCheckpointer(sqlite: Database, path: string, opts: { logger: Logger; synchronous: "NORMAL" | "FULL"; intervalMs?: number }): Checkpointer {
  let handedBack = false;
  const handBack = (why: string) => {
    if (handedBack) return;
    handedBack = true;
    opts.logger.warn("background WAL checkpoints stopped; SQLite's own checkpoint takes over", { error: why });
    try {
      sqlite.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
    } catch {
      // The database is closing.
    }
  };
  let worker: Worker;
  try {
    // Helper work: it never keeps the process alive (a serve that fails to start must still exit).
    worker = new Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" })), { ref: false });
  } catch (err) {
    handBack(err instanceof Error ? err.message : String(err));
    return { stop: async () => {} };
  }
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  let closed: (() => void) | null = null;
  let dead = false;
  worker.onmessage = (e: MessageEvent<{ type: string; message?: string }>) => {
    if (e.data.type === "error") handBack(e.data.message ?? "checkpoint failed");
    if (e.data.type === "closed") closed?.();
  };
  worker.onerror = (e) => {
    dead = true;
    handBack(e.message);
  };
  worker.postMessage({ type: "open", path, synchronous: opts.synchronous, intervalMs: opts.intervalMs ?? 200 });
  return {
    async stop() {
      if (dead) return void worker.terminate();
      // Neither the thread nor anything else here holds the process open: a stopping serve whose HTTP
      // server is already closed would end while waiting, with the thread's connection still open (so the
      // serving connection's close never comes, and the WAL stays behind). The timer holds it open.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = new Promise<void>((resolve) => {
        closed = resolve;
        timer = setTimeout(resolve, 2000);
      });
      worker.postMessage({ type: "close" });
      await done;
      clearTimeout(timer);
      worker.terminate();
    },
  };
}

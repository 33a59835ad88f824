import { createApp } from "./api/app";
import { ensureDataDir, type Config } from "./config/config";
import { startCheckpointer } from "./db/checkpointer";
import { heartbeat, HEARTBEAT_INTERVAL_MS, markStopped, newNodeId, registerNode, type ThisNode } from "./cluster/nodes";
import { releaseClaimsOf } from "./delivery/queue";
import pkg from "../package.json" with { type: "json" };
import { bootstrap, type BootstrapResult } from "./domain/bootstrap";
import { systemClock, type Clock } from "./domain/clock";
import type { Deps } from "./domain/deps";
import type { Store } from "./db/store";
import { createBus } from "./live/bus";
import { createLogger, type Logger } from "./observability/logger";
import { createMetrics } from "./observability/metrics";
import { startBackgroundWork } from "./runtime/background";
import { createDeps } from "./runtime/deps";
import { acquireServerLock, type ServerLock } from "./runtime/serverLock";

export interface RunningServer {
  url: string;
  port: number;
  deps: Deps;
  bootstrap: BootstrapResult;
  store: Store;
  /** Stops intake, lets in-flight work finish up to the deadline, closes the database. */
  stop(): Promise<void>;
}

/** The composition root: config → db → workers → Bun.serve(api + ui). */
export async function startServer(config: Config, opts: { logger?: Logger; clock?: Clock } = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  const clock = opts.clock ?? systemClock;
  ensureDataDir(config.dataDir);
  // Before anything touches the database: a second server must not re-queue the first one's work.
  const lock = acquireServerLock(config.dataDir, () => clock.now());
  try {
    lock.publish({ base_url: config.baseUrl });
    return await startLocked(config, lock, logger, clock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function startLocked(config: Config, lock: ServerLock, logger: Logger, clock: Clock): Promise<RunningServer> {
  const { deps, store } = await createDeps(config, { clock, bus: createBus() });
  // A new identity per start: the claims of a previous run of this process belong to a gone node.
  const node: ThisNode = { id: newNodeId(), version: pkg.version, address: "" };
  deps.node = node;
  const checkpointer = store.sqlite ? startCheckpointer(store.sqlite.handle, store.sqlite.path, { logger, synchronous: config.sync === "full" ? "FULL" : "NORMAL" }) : null;
  let boot: BootstrapResult;
  try {
    boot = await bootstrap(store.db, clock, { email: config.adminEmail, password: config.adminPassword });
  } catch (error) {
    await checkpointer?.stop();
    await store.close();
    throw error;
  }
  const metrics = createMetrics();
  await registerNode(store.db, clock, node);

  const tasks = startBackgroundWork({ deps, config, logger, metrics });
  let stopping = false;
  const app = createApp({ deps, logger, metrics, workersRunning: () => !stopping && tasks.every((t) => t.running()), pingDatabase: () => store.ping() });

  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    fetch: app.fetch,
    // The app answers an oversize body with the contract's 413; this only caps what Bun buffers.
    maxRequestBodySize: config.maxBodyBytes * 2 + 1024 * 1024,
    idleTimeout: 30,
  });
  const port = server.port ?? config.port;
  const url = `http://${config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host}:${port}`;
  if (deps.settings.baseUrl === `http://localhost:${config.port}`) deps.settings.baseUrl = `http://localhost:${port}`;
  lock.publish({ base_url: deps.settings.baseUrl });
  node.address = url;
  const beating = setInterval(() => {
    heartbeat(store.db, clock, node).catch((error) => logger.warn("heartbeat failed", { error: error instanceof Error ? error.message : String(error) }));
  }, HEARTBEAT_INTERVAL_MS);
  beating.unref?.();

  return {
    url,
    port,
    deps,
    bootstrap: boot,
    store,
    async stop() {
      if (stopping) return;
      stopping = true;
      void server.stop(false);
      const deadline = new Promise<false>((r) => setTimeout(() => r(false), config.shutdownTimeoutMs).unref?.());
      const drained = await Promise.race([Promise.all(tasks.map((t) => t.stop())).then(() => true as const), deadline]);
      if (!drained) {
        // Whatever is still out goes back to the queue now, due at once, rather than waiting for its lease.
        const released = await releaseClaimsOf(store.db, node.id).catch(() => 0);
        logger.warn("shutdown deadline reached; deliveries still in flight were handed back to the queue and are sent again after the restart", { released, shutdown_timeout_ms: config.shutdownTimeoutMs });
      }
      await server.stop(true);
      // Only now, with nothing of this node in flight: its remaining claims are anyone's once it is gone.
      clearInterval(beating);
      await markStopped(store.db, clock, node.id).catch(() => {});
      await checkpointer?.stop();
      await store.close();
      lock.release();
    },
  };
}

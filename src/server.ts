import { createApp } from "./api/app";
import { createIngestFastPath } from "./api/ingestFastPath";
import { nodeAddress } from "./cluster/identity";
import { heartbeat, markStopped, registerNode } from "./cluster/nodes";
import { startSchedulerLease, type SchedulerLease } from "./cluster/schedulerLease";
import { ensureDataDir, type Config } from "./config/config";
import { startCheckpointer } from "./db/sqlite/checkpointer";
import { publishAfterCommit } from "./db/committedBus";
import { tightenDataDir } from "./db/privateFiles";
import { releaseClaimsOf } from "./delivery/queue";
import { bootstrap, type BootstrapResult } from "./domain/bootstrap";
import type { AdminPassword } from "./domain/adminPassword";
import { sealPlainDestinationHeaders } from "./domain/destinationSecrets";
import { systemClock, type Clock } from "./core/clock";
import type { Deps } from "./domain/deps";
import type { Store } from "./db/store";
import { databaseAwareLogger, trackDatabaseHealth } from "./db/health";
import { createBus } from "./live/bus";
import { createClusterBus, type ClusterBus } from "./live/clusterBus";
import { createLogger, routeDriverLines, type Logger } from "./observability/logger";
import { createMetrics } from "./observability/metrics";
import type { Tracing } from "./observability/tracing";
import { startBackgroundWork } from "./boot/background";
import { createDeps } from "./boot/deps";
import { waitForDatabase } from "./runtime/waitForDatabase";
import { acquireServerLock, type ServerLock } from "./runtime/serverLock";
import { errorMessage } from "./contracts/errors";

const TRACING_OFF: Tracing = { flush: async () => {}, shutdown: async () => {} };

export interface RunningServer {
  url: string;
  port: number;
  deps: Deps;
  bootstrap: BootstrapResult;
  store: Store;
  /** Whether this node is the cluster's scheduler. */
  lease: SchedulerLease;
  /** Stops intake, lets in-flight work finish up to the deadline, closes the database. */
  stop(): Promise<void>;
  /** Sends the spans queued so far to the collector (nothing when tracing is off). */
  flushTraces(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
  firstAdmin?: AdminPassword;
  /** The delivery work's safety poll (src/runtime/context.ts, BackgroundContext.pollMs). */
  pollMs?: number;
}

/** The composition root: config → db → workers → Bun.serve(api + ui). */
export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  const clock = opts.clock ?? systemClock;
  ensureDataDir(config.dataDir);
  // Files left readable by others (an older version, a restore by hand, umask 022) are made private before anything opens them.
  const tightened = tightenDataDir(config.dataDir);
  if (tightened.changed.length > 0) {
    logger.warn("data dir files were readable by other users; made them private (dirs 0700, files 0600)", {
      data_dir: config.dataDir,
      files: tightened.changed.map((c) => `${c.path} (was ${c.mode})`),
    });
  }
  if (tightened.failed.length > 0) {
    logger.warn("could not make some data dir files private: change their owner or mode by hand", {
      data_dir: config.dataDir,
      files: tightened.failed.map((f) => `${f.path} (${f.error})`),
    });
  }
  // Before anything touches the database: a second server must not re-queue the first one's work.
  const lock = acquireServerLock(config.dataDir, () => clock.now());
  try {
    lock.publish({ base_url: config.baseUrl });
    return await startLocked(config, lock, logger, clock, opts);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function startLocked(config: Config, lock: ServerLock, logger: Logger, clock: Clock, { firstAdmin, pollMs }: StartOptions): Promise<RunningServer> {
  const localBus = createBus();
  const { deps, store } = await waitForDatabase(() => createDeps(config, { clock, bus: localBus }), { logger, limitMs: config.databaseWait });
  const databaseHealth = trackDatabaseHealth({ ping: () => store.ping(), logger });
  const workLogger = databaseAwareLogger(logger, databaseHealth, () => store.ping());
  const checkpointer = store.sqlite ? startCheckpointer(store.sqlite.handle, store.sqlite.path, { logger, synchronous: config.sync === "full" ? "FULL" : "NORMAL" }) : null;
  let boot: BootstrapResult;
  let lease: SchedulerLease;
  // On PostgreSQL the bus reaches every node of the database; SQLite has one process.
  let clusterBus: ClusterBus | null = null;
  try {
    // Like the local bus it replaces, it delivers what a transaction publishes after the commit (src/db/committedBus.ts).
    if (store.pg) deps.bus = publishAfterCommit(store.db, (clusterBus = await createClusterBus(store.pg.client, localBus, { nodeId: deps.node.id, logger })));
    boot = await bootstrap(store.db, clock, { email: config.adminEmail, password: config.adminPassword, prepared: firstAdmin });
    const sealed = await sealPlainDestinationHeaders(deps);
    if (sealed > 0) logger.info("encrypted the custom headers of destinations stored before they were secrets", { destinations: sealed });
    // A member of the cluster from here on: its claims are marked with its id, so its row must exist first.
    // The address has the configured port until the server listens (port 0: chosen then).
    deps.node.address = nodeAddress(config.host, config.port);
    await registerNode(store.db, clock, deps.node);
    lease = await startSchedulerLease(store, deps.node, { logger: workLogger });
  } catch (error) {
    await clusterBus?.stop();
    await checkpointer?.stop();
    databaseHealth.stop();
    await store.close();
    throw error;
  }
  const metrics = createMetrics({ node: deps.node.id });
  // Off (no provider, no spans) unless an OTLP endpoint is configured (docs/observability.md). The SDK and its
  // exporter are loaded only then: a server without tracing does not pay for them at start-up (docs/performance.md, "Start-up").
  const tracing: Tracing = !(config.otelEndpoint || config.otelTracesEndpoint) ? TRACING_OFF : (await import("./observability/tracing")).startTracing(
    {
      endpoint: config.otelEndpoint,
      tracesEndpoint: config.otelTracesEndpoint,
      headers: config.otelHeaders,
      serviceName: config.otelServiceName,
      serviceVersion: deps.node.version,
      sampler: config.otelTracesSampler,
      samplerArg: config.otelTracesSamplerArg,
      queueSize: config.otelQueueSize,
      timeoutMs: config.otelTracesTimeout ?? config.otelTimeout,
    },
    { logger, dropped: (n) => metrics.spansDropped.inc(n) },
  );

  const tasks = startBackgroundWork({ deps, config, logger: workLogger, metrics, lease, tracer: tracing.tracer, spans: tracing.spans, pollMs });
  let stopping = false;
  const stopDriverLines = store.pg ? routeDriverLines(logger, databaseHealth) : () => {};
  const app = createApp({ deps, logger, metrics, workersRunning: () => !stopping && tasks.every((t) => t.running()), pingDatabase: () => store.ping(), requestBodyTimeoutMs: config.requestBodyTimeout, databaseHealth, metricsToken: config.metricsToken, streamsPerCredential: config.streamsPerCredential, tracer: tracing.tracer });

  // The ingest hot path ahead of the app's middleware chain; what it does not take goes to the app (src/api/ingestFastPath.ts).
  const ingest = createIngestFastPath({ deps, logger, metrics, requestBodyTimeoutMs: config.requestBodyTimeout, databaseHealth, tracer: tracing.tracer, serverSpan: tracing.serverSpan }, app.fetch);

  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    routes: { "/v1/ingest/*": ingest },
    fetch: app.fetch,
    // The app answers an oversize body with the contract's 413; this only caps what Bun buffers.
    maxRequestBodySize: config.maxBodyBytes * 2 + 1024 * 1024,
    // Past the body timeout, so a stalled upload gets its 408 before Bun closes the socket (at most 255 s).
    idleTimeout: Math.min(255, Math.max(30, Math.ceil(config.requestBodyTimeout / 1000) + 10)),
  });
  const port = server.port ?? config.port;
  const url = `http://${config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host}:${port}`;
  if (deps.settings.baseUrl === `http://localhost:${config.port}`) deps.settings.baseUrl = `http://localhost:${port}`;
  lock.publish({ base_url: deps.settings.baseUrl });
  if (port !== config.port) {
    deps.node.address = nodeAddress(config.host, port);
    await heartbeat(store.db, clock, deps.node).catch((error) => logger.warn("node heartbeat failed", { error: errorMessage(error) }));
  }
  logger.info("node started", { node_id: deps.node.id, address: deps.node.address, version: deps.node.version, scheduler: lease.held() });

  return {
    url,
    port,
    deps,
    bootstrap: boot,
    store,
    lease,
    flushTraces: () => tracing.flush(),
    async stop() {
      if (stopping) return;
      stopping = true;
      void server.stop(false);
      const deadline = new Promise<false>((r) => setTimeout(() => r(false), config.shutdownTimeoutMs).unref?.());
      const drained = await Promise.race([Promise.all(tasks.map((t) => t.stop())).then(() => true as const), deadline]);
      if (!drained) {
        // Whatever is still out goes back to the queue now, due at once, rather than waiting for its lease.
        const released = await releaseClaimsOf(store.db, deps.node.id).catch(() => 0);
        logger.warn("shutdown deadline reached; deliveries still in flight were handed back to the queue and are sent again after the restart", { released, shutdown_timeout_ms: config.shutdownTimeoutMs });
      }
      await server.stop(true);
      // Another node takes the cluster-wide jobs at its next try, and drops this one from the live set at once.
      await lease.stop();
      await markStopped(store.db, clock, deps.node.id).catch(() => {});
      await clusterBus?.stop();
      await checkpointer?.stop();
      databaseHealth.stop();
      await store.close();
      stopDriverLines();
      // The last spans go out, within a bound: a collector that is away must not hold the shutdown.
      await Promise.race([tracing.shutdown().catch(() => {}), new Promise((r) => setTimeout(r, 2000).unref?.())]);
      lock.release();
    },
  };
}

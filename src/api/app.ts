import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import { routePath } from "hono/route";
import { AppError } from "../contracts/errors";
import type { DatabaseHealth } from "../db/health";
import type { Deps } from "../domain/deps";
import { stringEquals } from "../rules/verify/compare";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { rememberPeer } from "./clientAddress";
import { bodyProgressTimeout } from "./middleware/bodyTimeout";
import { errorHandler, nulInPath } from "./middleware/errors";
import { securityHeaders } from "./middleware/secureHeaders";
import { traceRequests } from "./middleware/tracing";
import type { Tracer } from "@opentelemetry/api";
import type { ApiEnv } from "./openapi";
import { serveUi } from "./ui";
import { createV1 } from "./v1";

export interface AppOptions {
  deps: Deps;
  logger: Logger;
  metrics: Metrics;
  /** Whether background workers are running (for /readyz). */
  workersRunning?: () => boolean;
  /** Resolves when the database answers (src/db/store.ts). */
  pingDatabase: () => Promise<void>;
  /** HOOKRELAY_METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>`. */
  metricsToken?: string;
  /** HOOKRELAY_STREAMS_PER_CREDENTIAL: open event streams one key or session may hold on this node. */
  streamsPerCredential?: number;
  /** How long a request body may stop arriving before a 408 (HOOKRELAY_REQUEST_BODY_TIMEOUT). */
  requestBodyTimeoutMs?: number;
  /** Where requests report an unreachable database (one log line when it goes, one when it is back). */
  databaseHealth?: DatabaseHealth;
  /** Set when tracing is on: every request is a SERVER span (./middleware/tracing.ts). */
  tracer?: Tracer;
}

/** The whole HTTP surface as one fetch handler: /v1, health, metrics and the admin UI. */
export function createApp({ deps, logger, metrics, workersRunning = () => true, pingDatabase, metricsToken, streamsPerCredential, requestBodyTimeoutMs = 10_000, databaseHealth, tracer }: AppOptions) {
  const app = new Hono<ApiEnv>();
  app.onError(errorHandler(logger, databaseHealth));

  app.use(securityHeaders);
  app.use(requestId());
  if (tracer) app.use(traceRequests(tracer));
  app.use(nulInPath);
  app.use(async (c, next) => {
    c.set("deps", deps);
    c.set("metrics", metrics);
    const started = performance.now();
    await next();
    const route = routePath(c, -1) || "unmatched";
    const seconds = (performance.now() - started) / 1000;
    metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) });
    metrics.httpDuration.observe({ route }, seconds);
    logger.debug("request", { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(seconds * 1000), request_id: c.get("requestId") });
  });
  app.use(rememberPeer);
  app.use(bodyProgressTimeout(requestBodyTimeoutMs));
  app.use(
    bodyLimit({
      maxSize: deps.settings.maxBodyBytes,
      onError: () => {
        throw new AppError("payload_too_large", `Request body exceeds ${deps.settings.maxBodyBytes} bytes`);
      },
    }),
  );

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    let dbOk = false;
    try {
      await pingDatabase();
      dbOk = true;
    } catch (error) {
      databaseHealth?.failed(error);
    }
    const ready = dbOk && workersRunning();
    return c.json({ status: ready ? "ok" : "unavailable", database: dbOk ? "ok" : "unavailable", workers: workersRunning() ? "ok" : "stopped" }, ready ? 200 : 503);
  });
  app.get("/metrics", async (c) => {
    // The server listens on 0.0.0.0 by default: with a token set, a scraper must present it (docs/operations.md, "Metrics").
    if (metricsToken !== undefined && !bearerMatches(c.req.header("authorization"), metricsToken)) {
      c.header("WWW-Authenticate", 'Bearer realm="metrics"');
      throw new AppError("unauthorized", "GET /metrics needs Authorization: Bearer <HOOKRELAY_METRICS_TOKEN>");
    }
    return c.body(await metrics.registry.metrics(), 200, { "content-type": metrics.registry.contentType });
  });

  app.route("/v1", createV1(deps, { streamsPerCredential, logger }));
  app.all("*", serveUi);
  return app;
}

/** Whether an Authorization header carries this bearer token, compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const m = header && /^Bearer\s+(.+)$/i.exec(header);
  return !!m && stringEquals(m[1]!.trim(), token);
}

export type App = ReturnType<typeof createApp>;

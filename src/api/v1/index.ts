import type { Deps } from "../../domain/deps";
import { authenticate } from "../middleware/auth";
import { csrfGuard } from "../middleware/csrf";
import { createLoginThrottle } from "../middleware/loginThrottle";
import { createStreamGuard } from "../../live/streamGuard";
import { newApi, type Api } from "../openapi";
import { registerAlertRuleRoutes } from "./alertRules";
import { registerAuditLogRoutes } from "./auditLog";
import { registerApplicationRoutes } from "./applications";
import { registerOrderingRoutes } from "./ordering";
import { registerEndpointRoutes } from "./endpoints";
import { registerMemberRoutes } from "./members";
import { registerMessageRoutes } from "./messages";
import { registerPortalRoutes } from "./portal";
import { registerAccountRoutes } from "./account";
import { registerAuthRoutes, registerLoginRoutes } from "./auth";
import { registerOidcRoutes } from "./oidc";
import { createOidcClient } from "../../outgoing/oidcClient";
import { silentLogger, type Logger } from "../../observability/logger";
import { registerClusterRoutes } from "./cluster";
import { registerCollectionRoutes } from "./collections";
import { registerConfigRoutes } from "./config";
import { registerBackupRoutes } from "./backups";
import { registerConnectionRoutes } from "./connections";
import { registerDeliveryAttemptRoutes } from "./deliveryAttempts";
import { registerDestinationRoutes } from "./destinations";
import { registerEventRetryRoutes } from "./eventRetry";
import { registerEventRoutes } from "./events";
import { registerEventTypeRoutes } from "./eventTypes";
import { registerEnvironmentRoutes } from "./environments";
import { registerOrganizationRoutes } from "./organizations";
import { registerIngestRoutes } from "./ingest";
import { registerIssueRoutes } from "./issues";
import { registerJobRoutes } from "./jobs";
import { registerNotificationChannelRoutes } from "./notificationChannels";
import { registerReplayRoutes } from "./replay";
import { registerSourceRoutes } from "./sources";
import { registerStatsRoutes } from "./stats";
import { registerTopicRoutes } from "./topics";

/**
 * The /v1 API. Public routes are registered before the auth middleware
 * (Hono runs handlers in registration order); every route after it needs
 * an API key or a session.
 */
export function createV1(deps: Deps, opts: { streamsPerCredential?: number; logger?: Logger } = {}): Api {
  const v1 = newApi();
  const streams = createStreamGuard(deps, { perCredential: opts.streamsPerCredential ?? 10 });

  // One throttle for logins and password changes: a guess is a guess, whichever route it comes by.
  const loginThrottle = createLoginThrottle(deps.clock);
  registerLoginRoutes(v1, loginThrottle);
  registerOidcRoutes(v1, deps.settings.oidc ? createOidcClient(deps.settings.oidc) : undefined, opts.logger ?? silentLogger);
  registerIngestRoutes(v1);
  v1.openAPIRegistry.registerComponent("securitySchemes", "apiKey", { type: "apiKey", in: "header", name: "X-API-Key" });
  v1.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  v1.openAPIRegistry.registerComponent("securitySchemes", "session", { type: "apiKey", in: "cookie", name: "hookrelay_session" });
  v1.openAPIRegistry.registerComponent("securitySchemes", "portal", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "hrp_…",
    description: "A consumer portal link's token (POST /applications/{appId}/portal): good only on the operations that list it, for its own application",
  });
  v1.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: { title: "hookrelay API", version: "1", description: "Self-hosted webhook relay. Ingest URLs: /v1/ingest/src_<id>." },
    servers: [{ url: `${deps.settings.baseUrl}/v1` }],
    security: [{ apiKey: [] }, { bearer: [] }, { session: [] }],
  });

  v1.use("*", authenticate, csrfGuard(() => [new URL(deps.settings.baseUrl).origin]));
  registerAuthRoutes(v1);
  registerAccountRoutes(v1, loginThrottle);
  registerOrganizationRoutes(v1);
  registerEnvironmentRoutes(v1);
  registerMemberRoutes(v1);
  registerSourceRoutes(v1);
  registerEventRoutes(v1, streams);
  registerEventRetryRoutes(v1);
  registerDestinationRoutes(v1);
  registerConnectionRoutes(v1);
  registerDeliveryAttemptRoutes(v1);
  registerReplayRoutes(v1);
  registerJobRoutes(v1);
  registerStatsRoutes(v1);
  registerClusterRoutes(v1);
  registerTopicRoutes(v1);
  registerConfigRoutes(v1);
  registerEventTypeRoutes(v1);
  registerCollectionRoutes(v1);
  registerIssueRoutes(v1);
  registerAlertRuleRoutes(v1);
  registerNotificationChannelRoutes(v1);
  registerBackupRoutes(v1);
  registerApplicationRoutes(v1);
  registerEndpointRoutes(v1);
  registerOrderingRoutes(v1);
  registerMessageRoutes(v1);
  registerPortalRoutes(v1);
  registerAuditLogRoutes(v1);
  return v1;
}

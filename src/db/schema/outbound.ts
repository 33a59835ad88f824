import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations, environments } from "./tenancy";
import { destinations } from "./delivery";
import { events } from "./events";

/**
 * Outbound sending (docs/outbound.md). An application is one receiver of the
 * operator's webhooks (one of their customers); it owns endpoints, and
 * messages created for it are fanned out to them through the delivery engine.
 */
export const applications = sqliteTable(
  "applications",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    envId: text("env_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The operator's own key for the application (their customer id): `{appId}` in paths accepts it. */
    uid: text("uid").notNull(),
    description: text("description"),
    /** JSON object text. */
    metadata: text("metadata"),
    status: text("status").notNull().default("active"),
    /** Deliveries per second across the application's endpoints; null: no limit. */
    rateLimit: integer("rate_limit"),
    /**
     * 1: endpoints a portal link set may reach what the server's own destinations
     * may (HOOKRELAY_BLOCK_PRIVATE_DESTINATIONS); 0: they are held to the
     * private-address block (docs/outbound.md, "What a portal link can reach").
     */
    allowPrivateEndpoints: integer("allow_private_endpoints").notNull().default(0),
    /** Portal links carry the generation they were minted in; revoking (or disabling) moves it on, and older links stop working. */
    portalGeneration: integer("portal_generation").notNull().default(0),
    /** Portal resends: when the current one-minute window began, and how many it has had. */
    portalResendWindow: text("portal_resend_window"),
    portalResendCount: integer("portal_resend_count").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("applications_uid").on(t.orgId, t.envId, t.uid), index("applications_scope").on(t.orgId, t.envId, t.createdAt, t.id)],
);

/**
 * An endpoint is delivered to through a destination row of its own
 * (`dst_<endpoint id>`, destinations.application_id set, hidden from the
 * destinations API): the delivery engine's queue, workers, retries, DLQ and
 * issues work on it unchanged. Its URL, status, rate limit, current
 * signing secret and its algorithm live on that row; what only endpoints have lives here.
 */
export const applicationEndpoints = sqliteTable(
  "application_endpoints",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    applicationId: text("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    destinationId: text("destination_id")
      .notNull()
      .references(() => destinations.id, { onDelete: "cascade" }),
    description: text("description"),
    /** JSON array of event type names; null: every type. */
    filterTypes: text("filter_types"),
    expiresAt: text("expires_at"),
    /** The secret a rotation replaced (sealed): it keeps signing beside the new one until previous_secret_expires_at. */
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: text("previous_secret_expires_at"),
    /** The first failure since the last success: HOOKRELAY_ENDPOINT_DISABLE_AFTER later, the endpoint is disabled. */
    failingSince: text("failing_since"),
    /** 1: its URL was set through a portal link, so deliveries to it are held to the private-address block unless the application is opted in. */
    portalHeld: integer("portal_held").notNull().default(0),
    /** 1: messages are delivered one at a time per message ordering_key, in the order received (docs/delivery.md, "Ordered delivery"). */
    ordered: integer("ordered").notNull().default(0),
    /** `continue` or `block`, as for connections. */
    onDlq: text("on_dlq").notNull().default("continue"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("application_endpoints_destination").on(t.destinationId), index("application_endpoints_application").on(t.applicationId, t.createdAt, t.id)],
);

/**
 * A message's payload is stored as an event (`evt_<message id>`) of the
 * environment's outbound source, so the engine's deliveries, retention and
 * event views apply to it. Its status is kept here by counters the recording
 * transaction updates (one row per message per recorded batch), not by
 * aggregating the message's attempts, which a fan-out to thousands of
 * endpoints would make cost thousands of rows per batch.
 */
export const messages = sqliteTable(
  "messages",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    envId: text("env_id").notNull(),
    applicationId: text("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    eventType: text("event_type").notNull(),
    /** The `id` given on create: the same key returns this message again instead of sending a second. */
    idempotencyKey: text("idempotency_key"),
    /** The key ordered endpoints deliver it in line with (null: the null-key line). */
    orderingKey: text("ordering_key"),
    status: text("status").notNull(),
    /** Delivery chains (one per endpoint sent to) not yet settled. */
    outstanding: integer("outstanding").notNull().default(0),
    /** Chains that ended in the DLQ and were not resent since. */
    failed: integer("failed").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("messages_event").on(t.eventId),
    uniqueIndex("messages_idempotency").on(t.applicationId, t.idempotencyKey),
    index("messages_application_created").on(t.applicationId, t.createdAt, t.id),
    index("messages_application_type").on(t.applicationId, t.eventType, t.createdAt, t.id),
  ],
);

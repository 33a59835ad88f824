import type { DedupStrategy, VerificationType } from "../contracts/sources";

/**
 * Source templates are data: a verification scheme with its header and
 * config, the provider's delivery id as the dedup key (on by default), where the
 * event type is found, and an optional endpoint handshake. Adding a provider
 * that signs like one of these is a new entry here, not new code.
 */
export interface SourceTemplate {
  id: string;
  name: string;
  description: string;
  verification_type: VerificationType;
  verification_header: string | null;
  verification_config: Record<string, unknown>;
  dedup_strategy: DedupStrategy | null;
  dedup_field: string | null;
  /** Where the event type is read: a request header, or a dot path into the JSON body. */
  event_type?: { header: string } | { field: string };
  /** A provider's endpoint check answered instead of storing an event (see ../ingest/handshake.ts). */
  handshake?: Handshake;
}

/** When the JSON body's `field` equals `equals`, answer 200 `{[echo]: body[echo]}`. */
export interface Handshake {
  field: string;
  equals: string;
  echo: string;
}

export const templates: readonly SourceTemplate[] = [
  {
    id: "github",
    name: "GitHub",
    description: "X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>. Dedup key: X-GitHub-Delivery.",
    verification_type: "hmac-sha256",
    verification_header: "X-Hub-Signature-256",
    verification_config: { encoding: "hex", prefix: "sha256=" },
    dedup_strategy: "header",
    dedup_field: "X-GitHub-Delivery",
    event_type: { header: "X-GitHub-Event" },
  },
  {
    id: "stripe",
    name: "Stripe",
    description: "Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of '{t}.{body}'>, 300 s tolerance. Dedup key: the event id in the body.",
    verification_type: "hmac-sha256",
    verification_header: "Stripe-Signature",
    verification_config: { encoding: "hex", header_format: "kv", kv_timestamp_key: "t", kv_signature_key: "v1", signed_payload: "{timestamp}.{body}", tolerance_seconds: 300 },
    dedup_strategy: "field",
    dedup_field: "id",
    event_type: { field: "type" },
  },
  {
    id: "shopify",
    name: "Shopify",
    description: "X-Shopify-Hmac-Sha256: base64 HMAC-SHA256 of the body. Dedup key: X-Shopify-Webhook-Id.",
    verification_type: "hmac-sha256",
    verification_header: "X-Shopify-Hmac-Sha256",
    verification_config: { encoding: "base64" },
    dedup_strategy: "header",
    dedup_field: "X-Shopify-Webhook-Id",
    event_type: { header: "X-Shopify-Topic" },
  },
  {
    id: "slack",
    name: "Slack",
    description: "X-Slack-Signature: v0=<hex HMAC-SHA256 of 'v0:{X-Slack-Request-Timestamp}:{body}'>, 300 s tolerance. Answers url_verification challenges. Dedup key: event_id.",
    verification_type: "hmac-sha256",
    verification_header: "X-Slack-Signature",
    verification_config: { encoding: "hex", prefix: "v0=", timestamp_header: "X-Slack-Request-Timestamp", signed_payload: "v0:{timestamp}:{body}", tolerance_seconds: 300 },
    dedup_strategy: "field",
    dedup_field: "event_id",
    event_type: { field: "event.type" },
    handshake: { field: "type", equals: "url_verification", echo: "challenge" },
  },
  {
    id: "svix",
    name: "Svix",
    description: "svix-id, svix-timestamp, svix-signature (v1,<base64>), whsec_ secret, 300 s tolerance. Dedup key: svix-id.",
    verification_type: "standard-webhooks",
    verification_header: "svix-signature",
    verification_config: { id_header: "svix-id", timestamp_header: "svix-timestamp", tolerance_seconds: 300 },
    dedup_strategy: "header",
    dedup_field: "svix-id",
    event_type: { field: "type" },
  },
  {
    id: "standard-webhooks",
    name: "Standard Webhooks",
    description: "webhook-id, webhook-timestamp, webhook-signature (v1,<base64>), whsec_ secret, 300 s tolerance. Dedup key: webhook-id.",
    verification_type: "standard-webhooks",
    verification_header: "webhook-signature",
    verification_config: { id_header: "webhook-id", timestamp_header: "webhook-timestamp", tolerance_seconds: 300 },
    dedup_strategy: "header",
    dedup_field: "webhook-id",
    event_type: { field: "type" },
  },
  {
    id: "twilio",
    name: "Twilio",
    description: "X-Twilio-Signature: base64 HMAC-SHA1 (auth token) of the URL plus the sorted form parameters. Dedup key: I-Twilio-Idempotency-Token.",
    verification_type: "twilio",
    verification_header: "X-Twilio-Signature",
    verification_config: {},
    dedup_strategy: "header",
    dedup_field: "I-Twilio-Idempotency-Token",
  },
  {
    id: "gitlab",
    name: "GitLab",
    description: "X-Gitlab-Token equal to the secret token. Dedup key: X-Gitlab-Event-UUID.",
    verification_type: "token",
    verification_header: "X-Gitlab-Token",
    verification_config: {},
    dedup_strategy: "header",
    dedup_field: "X-Gitlab-Event-UUID",
    event_type: { header: "X-Gitlab-Event" },
  },
  {
    id: "generic-hmac-sha256",
    name: "Generic HMAC-SHA256",
    description: "X-Signature: hex HMAC-SHA256 of the body, with or without a sha256= prefix. Dedup key: SHA-256 of the body.",
    verification_type: "hmac-sha256",
    verification_header: "X-Signature",
    verification_config: { encoding: "hex", prefix: "sha256=" },
    dedup_strategy: "body_hash",
    dedup_field: null,
  },
  {
    id: "generic-hmac-sha1",
    name: "Generic HMAC-SHA1",
    description: "X-Signature: hex HMAC-SHA1 of the body, with or without a sha1= prefix. Dedup key: SHA-256 of the body.",
    verification_type: "hmac-sha1",
    verification_header: "X-Signature",
    verification_config: { encoding: "hex", prefix: "sha1=" },
    dedup_strategy: "body_hash",
    dedup_field: null,
  },
];

const byId = new Map(templates.map((t) => [t.id, t]));

export function findTemplate(id: string | null | undefined): SourceTemplate | undefined {
  return id ? byId.get(id) : undefined;
}

/**
 * A source created from a template dedups by the provider's delivery id
 * (a header or a body field) unless the request says otherwise. A body hash
 * is no provider key: two equal bodies may be two real events.
 */
export function templateDedupsByDefault(template: SourceTemplate | undefined): boolean {
  return template?.dedup_strategy === "header" || template?.dedup_strategy === "field";
}

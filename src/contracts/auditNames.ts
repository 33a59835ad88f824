/** The words of the audit trail (docs/audit.md), without zod: the admin UI offers them as filters. */

/** The actions the trail records for the writes of this codebase; other parts may add their own verbs. */
export const auditActions = ["create", "update", "delete", "retry", "replay", "redrive", "recover", "resend", "rotate_secret", "revoke", "test", "login", "login_failed", "logout", "unlock", "invite", "accept_invite", "role_change", "password_reset", "reset_password", "skip"] as const;

/** The resource types of the trail, as the API names them (docs/audit.md). */
export const auditResourceTypes = [
  "source",
  "destination",
  "connection",
  "topic",
  "event_type",
  "collection",
  "alert_rule",
  "notification_channel",
  "issue",
  "api_key",
  "environment",
  "application",
  "endpoint",
  "portal_link",
  "message",
  "event",
  "delivery_attempt",
  "backup",
  "user",
  "member",
  "session",
  "organization",
] as const;

CREATE TABLE "account_links" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"user_id" text NOT NULL,
	"org_id" text,
	"token_hash" text NOT NULL,
	"created_by" text,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	"used_at" text,
	CONSTRAINT "account_links_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "alert_history" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"alert_rule_id" text NOT NULL,
	"trigger_reason" text NOT NULL,
	"trigger_data" text NOT NULL,
	"channels_notified" text NOT NULL,
	"created_at" text NOT NULL,
	"status" text DEFAULT 'triggered' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_rules" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"enabled" bigint DEFAULT 1 NOT NULL,
	"rule_type" text NOT NULL,
	"rule_config" text NOT NULL,
	"source_id" text,
	"destination_id" text,
	"channel_ids" text NOT NULL,
	"cooldown_minutes" bigint NOT NULL,
	"last_triggered_at" text,
	"trigger_count" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	"firing_since" text,
	"reported_until" text,
	"reported_until_id" text
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"user_id" text,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"scopes" text,
	"request_count" bigint DEFAULT 0 NOT NULL,
	"revoked" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"last_used_at" text,
	"revoked_at" text,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "application_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"application_id" text NOT NULL,
	"destination_id" text NOT NULL,
	"description" text,
	"filter_types" text,
	"expires_at" text,
	"previous_secret" text,
	"previous_secret_expires_at" text,
	"failing_since" text,
	"portal_held" bigint DEFAULT 0 NOT NULL,
	"ordered" bigint DEFAULT 0 NOT NULL,
	"on_dlq" text DEFAULT 'continue' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "applications" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"name" text NOT NULL,
	"uid" text NOT NULL,
	"description" text,
	"metadata" text,
	"status" text DEFAULT 'active' NOT NULL,
	"rate_limit" bigint,
	"allow_private_endpoints" bigint DEFAULT 0 NOT NULL,
	"portal_generation" bigint DEFAULT 0 NOT NULL,
	"portal_resend_window" text,
	"portal_resend_count" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text,
	"actor_type" text NOT NULL,
	"actor_id" text,
	"actor_name" text,
	"action" text NOT NULL,
	"resource_type" text NOT NULL,
	"resource_id" text,
	"changes" text,
	"ip" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "collection_records" (
	"id" text PRIMARY KEY NOT NULL,
	"collection_id" text NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"record_key" text NOT NULL,
	"data" text NOT NULL,
	"event_type" text,
	"source_event_id" text NOT NULL,
	"source_event_at" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "collections" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"source_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"event_types" text,
	"event_type_path" text DEFAULT 'type' NOT NULL,
	"key_path" text NOT NULL,
	"transform_expression" text,
	"delete_event_types" text,
	"generation" bigint DEFAULT 0 NOT NULL,
	"record_count" bigint DEFAULT 0 NOT NULL,
	"position_at" text,
	"position_event_id" text,
	"events_processed" bigint DEFAULT 0 NOT NULL,
	"events_ignored" bigint DEFAULT 0 NOT NULL,
	"events_missing_key" bigint DEFAULT 0 NOT NULL,
	"events_transform_failed" bigint DEFAULT 0 NOT NULL,
	"last_error" text,
	"last_error_event_id" text,
	"last_error_at" text,
	"backfill_total" bigint DEFAULT 0 NOT NULL,
	"backfill_processed" bigint DEFAULT 0 NOT NULL,
	"backfill_until_at" text,
	"backfill_until_id" text,
	"backfill_completed_at" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "connections" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"source_id" text NOT NULL,
	"destination_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"enabled" bigint DEFAULT 1 NOT NULL,
	"filter_rules" text,
	"status" text DEFAULT 'active' NOT NULL,
	"event_count" bigint DEFAULT 0 NOT NULL,
	"last_event_at" text,
	"transform_enabled" bigint DEFAULT 0 NOT NULL,
	"transform_expression" text,
	"ordered" bigint DEFAULT 0 NOT NULL,
	"ordering_key" text,
	"on_dlq" text DEFAULT 'continue' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "delivery_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"event_id" text NOT NULL,
	"connection_id" text,
	"destination_id" text NOT NULL,
	"request_url" text NOT NULL,
	"request_method" text NOT NULL,
	"request_headers" text,
	"request_body_size" bigint DEFAULT 0 NOT NULL,
	"response_status" bigint,
	"response_headers" text,
	"response_body" text,
	"duration_ms" bigint,
	"status" text NOT NULL,
	"error" text,
	"error_detail" text,
	"attempt_number" bigint,
	"next_retry_at" text,
	"is_dlq" bigint DEFAULT 0 NOT NULL,
	"dlq_at" text,
	"trigger_type" text,
	"scheduled_at" text NOT NULL,
	"sent_at" text,
	"lease_until" text,
	"claimed_by" text,
	"no_retry" bigint DEFAULT 0 NOT NULL,
	"forced" bigint DEFAULT 0 NOT NULL,
	"job_id" text,
	"ordering_lane" text,
	"ordering_key" text,
	"ordering_hold" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "destinations" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"http_method" text DEFAULT 'POST' NOT NULL,
	"headers" text,
	"auth_type" text DEFAULT 'none' NOT NULL,
	"auth_config" text,
	"timeout_ms" bigint DEFAULT 30000 NOT NULL,
	"rate_limit_per_second" bigint,
	"max_retries" bigint DEFAULT 8 NOT NULL,
	"retry_strategy" text DEFAULT 'exponential' NOT NULL,
	"retry_interval_seconds" bigint DEFAULT 30 NOT NULL,
	"retry_schedule" text,
	"signing_secret" text NOT NULL,
	"signing_algorithm" text DEFAULT 'hmac-sha256' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"application_id" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "environments" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_types" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"json_schema" text,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"source_id" text NOT NULL,
	"method" text NOT NULL,
	"path" text,
	"query" text,
	"content_type" text,
	"source_ip" text,
	"headers" text NOT NULL,
	"body" "bytea" NOT NULL,
	"payload_size" bigint NOT NULL,
	"verification_status" text NOT NULL,
	"verification_error" text,
	"dedup_status" text NOT NULL,
	"dedup_key" text,
	"duplicate_of" text,
	"status" text NOT NULL,
	"schema_errors" text,
	"event_type" text,
	"received_at" text NOT NULL,
	"routed_at" text
);
--> statement-breakpoint
CREATE TABLE "issues" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"destination_id" text NOT NULL,
	"fingerprint" text NOT NULL,
	"title" text NOT NULL,
	"status" text NOT NULL,
	"snoozed_until" text,
	"occurrence_count" bigint DEFAULT 0 NOT NULL,
	"first_seen_at" text NOT NULL,
	"last_seen_at" text NOT NULL,
	"resolved_at" text,
	"last_attempt_id" text,
	"last_event_id" text,
	"last_error" text,
	"last_status_code" bigint,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"kind" text NOT NULL,
	"params" text NOT NULL,
	"status" text NOT NULL,
	"total" bigint DEFAULT 0 NOT NULL,
	"processed" bigint DEFAULT 0 NOT NULL,
	"succeeded" bigint DEFAULT 0 NOT NULL,
	"failed" bigint DEFAULT 0 NOT NULL,
	"skipped" bigint DEFAULT 0 NOT NULL,
	"cursor" text,
	"started_at" text NOT NULL,
	"completed_at" text,
	"expires_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"status" text NOT NULL,
	"env_id" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"application_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"idempotency_key" text,
	"ordering_key" text,
	"status" text NOT NULL,
	"outstanding" bigint DEFAULT 0 NOT NULL,
	"failed" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"id" text PRIMARY KEY NOT NULL,
	"version" text NOT NULL,
	"hostname" text NOT NULL,
	"pid" bigint NOT NULL,
	"address" text NOT NULL,
	"started_at" text NOT NULL,
	"last_heartbeat_at" text NOT NULL,
	"stopped_at" text
);
--> statement-breakpoint
CREATE TABLE "notification_channels" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"config" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text DEFAULT '' NOT NULL,
	CONSTRAINT "organizations_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "record_changelog" (
	"id" text PRIMARY KEY NOT NULL,
	"collection_id" text NOT NULL,
	"record_id" text NOT NULL,
	"record_key" text NOT NULL,
	"change_type" text NOT NULL,
	"before_data" text,
	"after_data" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	"method" text DEFAULT 'password' NOT NULL,
	"ip" text,
	"user_agent" text,
	"last_used_at" text
);
--> statement-breakpoint
CREATE TABLE "sources" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"template" text,
	"verification_enabled" bigint DEFAULT 0 NOT NULL,
	"verification_type" text,
	"verification_secret" text,
	"verification_header" text,
	"verification_config" text,
	"dedup_enabled" bigint DEFAULT 0 NOT NULL,
	"dedup_strategy" text,
	"dedup_field" text,
	"dedup_window_seconds" bigint DEFAULT 3600 NOT NULL,
	"ip_allowlist" text,
	"ip_denylist" text,
	"status" text DEFAULT 'active' NOT NULL,
	"event_count" bigint DEFAULT 0 NOT NULL,
	"request_count" bigint DEFAULT 0 NOT NULL,
	"last_event_at" text,
	"is_ephemeral" bigint DEFAULT 0 NOT NULL,
	"expires_at" text,
	"request_limit" bigint,
	"type" text DEFAULT 'webhook' NOT NULL,
	"source_config" text,
	"schema_validation_enabled" bigint DEFAULT 0 NOT NULL,
	"json_schema" text,
	"schema_action" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "topics" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"source_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"schema" text,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"name" text,
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"instance_owner" bigint DEFAULT 0 NOT NULL,
	"last_login_at" text,
	"created_at" text NOT NULL,
	"login_unlocked_at" text,
	CONSTRAINT "users_email_unique" UNIQUE("email")
);
--> statement-breakpoint
ALTER TABLE "account_links" ADD CONSTRAINT "account_links_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_links" ADD CONSTRAINT "account_links_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_history" ADD CONSTRAINT "alert_history_alert_rule_id_alert_rules_id_fk" FOREIGN KEY ("alert_rule_id") REFERENCES "public"."alert_rules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD CONSTRAINT "alert_rules_source_id_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD CONSTRAINT "alert_rules_destination_id_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "application_endpoints" ADD CONSTRAINT "application_endpoints_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "application_endpoints" ADD CONSTRAINT "application_endpoints_destination_id_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_records" ADD CONSTRAINT "collection_records_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collections" ADD CONSTRAINT "collections_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collections" ADD CONSTRAINT "collections_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collections" ADD CONSTRAINT "collections_source_id_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "connections" ADD CONSTRAINT "connections_source_id_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "connections" ADD CONSTRAINT "connections_destination_id_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "environments" ADD CONSTRAINT "environments_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_types" ADD CONSTRAINT "event_types_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_types" ADD CONSTRAINT "event_types_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_source_id_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issues" ADD CONSTRAINT "issues_destination_id_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "record_changelog" ADD CONSTRAINT "record_changelog_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sources" ADD CONSTRAINT "sources_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sources" ADD CONSTRAINT "sources_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "topics" ADD CONSTRAINT "topics_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "topics" ADD CONSTRAINT "topics_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "topics" ADD CONSTRAINT "topics_source_id_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_env_id_environments_id_fk" FOREIGN KEY ("env_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_links_user" ON "account_links" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "alert_history_rule_created" ON "alert_history" USING btree ("alert_rule_id","created_at","id");--> statement-breakpoint
CREATE INDEX "alert_history_created" ON "alert_history" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "alert_rules_scope" ON "alert_rules" USING btree ("org_id","env_id","created_at","id");--> statement-breakpoint
CREATE INDEX "alert_rules_enabled_type" ON "alert_rules" USING btree ("enabled","rule_type");--> statement-breakpoint
CREATE INDEX "api_keys_scope" ON "api_keys" USING btree ("org_id","env_id");--> statement-breakpoint
CREATE UNIQUE INDEX "application_endpoints_destination" ON "application_endpoints" USING btree ("destination_id");--> statement-breakpoint
CREATE INDEX "application_endpoints_application" ON "application_endpoints" USING btree ("application_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "applications_uid" ON "applications" USING btree ("org_id","env_id","uid");--> statement-breakpoint
CREATE INDEX "applications_scope" ON "applications" USING btree ("org_id","env_id","created_at","id");--> statement-breakpoint
CREATE INDEX "audit_log_org_time" ON "audit_log" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "audit_log_created" ON "audit_log" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "collection_records_key" ON "collection_records" USING btree ("collection_id","record_key");--> statement-breakpoint
CREATE INDEX "collection_records_created" ON "collection_records" USING btree ("collection_id","created_at","id");--> statement-breakpoint
CREATE INDEX "collections_scope" ON "collections" USING btree ("org_id","env_id","created_at");--> statement-breakpoint
CREATE INDEX "collections_source" ON "collections" USING btree ("source_id");--> statement-breakpoint
CREATE INDEX "connections_source" ON "connections" USING btree ("source_id");--> statement-breakpoint
CREATE INDEX "connections_scope" ON "connections" USING btree ("org_id","env_id","created_at");--> statement-breakpoint
CREATE INDEX "attempts_due" ON "delivery_attempts" USING btree ("destination_id","scheduled_at") WHERE status = 'queued';--> statement-breakpoint
CREATE INDEX "attempts_due_time" ON "delivery_attempts" USING btree ("scheduled_at","destination_id") WHERE status = 'queued';--> statement-breakpoint
CREATE INDEX "attempts_leased" ON "delivery_attempts" USING btree ("lease_until") WHERE status = 'delivering';--> statement-breakpoint
CREATE INDEX "attempts_event" ON "delivery_attempts" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "attempts_scope_created" ON "delivery_attempts" USING btree ("org_id","env_id","created_at","id");--> statement-breakpoint
CREATE INDEX "attempts_destination" ON "delivery_attempts" USING btree ("destination_id","created_at");--> statement-breakpoint
CREATE INDEX "attempts_dlq" ON "delivery_attempts" USING btree ("destination_id") WHERE is_dlq = 1;--> statement-breakpoint
CREATE INDEX "attempts_job" ON "delivery_attempts" USING btree ("job_id","status") WHERE job_id is not null;--> statement-breakpoint
CREATE INDEX "attempts_lane" ON "delivery_attempts" USING btree ("ordering_lane","scheduled_at","event_id") WHERE ordering_lane is not null and (status in ('queued', 'delivering', 'held') or (is_dlq = 1 and ordering_hold = 1));--> statement-breakpoint
CREATE INDEX "attempts_dlq_scope" ON "delivery_attempts" USING btree ("org_id","env_id") WHERE is_dlq = 1;--> statement-breakpoint
CREATE INDEX "destinations_scope" ON "destinations" USING btree ("org_id","env_id","created_at");--> statement-breakpoint
CREATE INDEX "destinations_application" ON "destinations" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "destinations_paused" ON "destinations" USING btree ("id") WHERE status = 'paused';--> statement-breakpoint
CREATE UNIQUE INDEX "environments_org_name" ON "environments" USING btree ("org_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "environments_org_slug" ON "environments" USING btree ("org_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "event_types_name" ON "event_types" USING btree ("org_id","env_id","name");--> statement-breakpoint
CREATE INDEX "event_types_scope" ON "event_types" USING btree ("org_id","env_id","created_at");--> statement-breakpoint
CREATE INDEX "events_scope_received" ON "events" USING btree ("org_id","env_id","received_at","id");--> statement-breakpoint
CREATE INDEX "events_source_received" ON "events" USING btree ("source_id","received_at","id");--> statement-breakpoint
CREATE INDEX "events_dedup" ON "events" USING btree ("source_id","dedup_key","received_at") WHERE "events"."dedup_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "events_received" ON "events" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "events_unrouted" ON "events" USING btree ("status","routed_at") WHERE "events"."routed_at" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "issues_fingerprint" ON "issues" USING btree ("fingerprint");--> statement-breakpoint
CREATE INDEX "issues_destination_status" ON "issues" USING btree ("destination_id","status");--> statement-breakpoint
CREATE INDEX "issues_scope_created" ON "issues" USING btree ("org_id","env_id","created_at","id");--> statement-breakpoint
CREATE INDEX "issues_scope_status" ON "issues" USING btree ("org_id","env_id","status");--> statement-breakpoint
CREATE INDEX "jobs_status" ON "jobs" USING btree ("status");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_org_user" ON "memberships" USING btree ("org_id","user_id");--> statement-breakpoint
CREATE INDEX "memberships_user" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_event" ON "messages" USING btree ("event_id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_idempotency" ON "messages" USING btree ("application_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "messages_application_created" ON "messages" USING btree ("application_id","created_at","id");--> statement-breakpoint
CREATE INDEX "messages_application_type" ON "messages" USING btree ("application_id","event_type","created_at","id");--> statement-breakpoint
CREATE INDEX "nodes_heartbeat" ON "nodes" USING btree ("last_heartbeat_at");--> statement-breakpoint
CREATE INDEX "notification_channels_scope" ON "notification_channels" USING btree ("org_id","env_id","created_at","id");--> statement-breakpoint
CREATE INDEX "record_changelog_key" ON "record_changelog" USING btree ("collection_id","record_key","created_at","id");--> statement-breakpoint
CREATE INDEX "sessions_user" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sources_scope" ON "sources" USING btree ("org_id","env_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sources_slug" ON "sources" USING btree ("org_id","env_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "topics_slug" ON "topics" USING btree ("org_id","env_id","slug");--> statement-breakpoint
CREATE INDEX "topics_scope" ON "topics" USING btree ("org_id","env_id","created_at");--> statement-breakpoint
CREATE INDEX "topics_source" ON "topics" USING btree ("source_id");
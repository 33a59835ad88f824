CREATE TABLE `alert_history` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`alert_rule_id` text NOT NULL,
	`trigger_reason` text NOT NULL,
	`trigger_data` text NOT NULL,
	`channels_notified` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`alert_rule_id`) REFERENCES `alert_rules`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `alert_history_rule_created` ON `alert_history` (`alert_rule_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `alert_history_created` ON `alert_history` (`created_at`);--> statement-breakpoint
CREATE TABLE `alert_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`enabled` integer DEFAULT 1 NOT NULL,
	`rule_type` text NOT NULL,
	`rule_config` text NOT NULL,
	`source_id` text,
	`destination_id` text,
	`channel_ids` text NOT NULL,
	`cooldown_minutes` integer NOT NULL,
	`last_triggered_at` text,
	`trigger_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`source_id`) REFERENCES `sources`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`destination_id`) REFERENCES `destinations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `alert_rules_scope` ON `alert_rules` (`org_id`,`env_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `alert_rules_enabled_type` ON `alert_rules` (`enabled`,`rule_type`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`user_id` text,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`scopes` text,
	`request_count` integer DEFAULT 0 NOT NULL,
	`revoked` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`env_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_scope` ON `api_keys` (`org_id`,`env_id`);--> statement-breakpoint
CREATE TABLE `application_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`application_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`description` text,
	`signing_algorithm` text DEFAULT 'standard-webhooks' NOT NULL,
	`filter_types` text,
	`expires_at` text,
	`previous_secret` text,
	`previous_secret_expires_at` text,
	`failing_since` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`destination_id`) REFERENCES `destinations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `application_endpoints_destination` ON `application_endpoints` (`destination_id`);--> statement-breakpoint
CREATE INDEX `application_endpoints_application` ON `application_endpoints` (`application_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `applications` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`name` text NOT NULL,
	`uid` text NOT NULL,
	`description` text,
	`metadata` text,
	`status` text DEFAULT 'active' NOT NULL,
	`rate_limit` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`env_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `applications_uid` ON `applications` (`org_id`,`env_id`,`uid`);--> statement-breakpoint
CREATE INDEX `applications_scope` ON `applications` (`org_id`,`env_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `collection_records` (
	`id` text PRIMARY KEY NOT NULL,
	`collection_id` text NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`record_key` text NOT NULL,
	`data` text NOT NULL,
	`event_type` text,
	`source_event_id` text NOT NULL,
	`source_event_at` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`collection_id`) REFERENCES `collections`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `collection_records_key` ON `collection_records` (`collection_id`,`record_key`);--> statement-breakpoint
CREATE INDEX `collection_records_created` ON `collection_records` (`collection_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `collections` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`source_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`event_types` text,
	`event_type_path` text DEFAULT 'type' NOT NULL,
	`key_path` text NOT NULL,
	`transform_expression` text,
	`delete_event_types` text,
	`generation` integer DEFAULT 0 NOT NULL,
	`record_count` integer DEFAULT 0 NOT NULL,
	`position_at` text,
	`position_event_id` text,
	`events_processed` integer DEFAULT 0 NOT NULL,
	`events_ignored` integer DEFAULT 0 NOT NULL,
	`events_missing_key` integer DEFAULT 0 NOT NULL,
	`events_transform_failed` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`last_error_event_id` text,
	`last_error_at` text,
	`backfill_total` integer DEFAULT 0 NOT NULL,
	`backfill_processed` integer DEFAULT 0 NOT NULL,
	`backfill_until_at` text,
	`backfill_until_id` text,
	`backfill_completed_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`env_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`source_id`) REFERENCES `sources`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `collections_scope` ON `collections` (`org_id`,`env_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `collections_source` ON `collections` (`source_id`);--> statement-breakpoint
CREATE TABLE `connections` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`source_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`enabled` integer DEFAULT 1 NOT NULL,
	`filter_rules` text,
	`status` text DEFAULT 'active' NOT NULL,
	`event_count` integer DEFAULT 0 NOT NULL,
	`last_event_at` text,
	`transform_enabled` integer DEFAULT 0 NOT NULL,
	`transform_expression` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`source_id`) REFERENCES `sources`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`destination_id`) REFERENCES `destinations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `connections_source` ON `connections` (`source_id`);--> statement-breakpoint
CREATE INDEX `connections_scope` ON `connections` (`org_id`,`env_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `delivery_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`event_id` text NOT NULL,
	`connection_id` text,
	`destination_id` text NOT NULL,
	`request_url` text NOT NULL,
	`request_method` text NOT NULL,
	`request_headers` text,
	`request_body_size` integer DEFAULT 0 NOT NULL,
	`response_status` integer,
	`response_headers` text,
	`response_body` text,
	`duration_ms` integer,
	`status` text NOT NULL,
	`error` text,
	`error_detail` text,
	`attempt_number` integer,
	`next_retry_at` text,
	`is_dlq` integer DEFAULT 0 NOT NULL,
	`dlq_at` text,
	`trigger_type` text,
	`scheduled_at` text NOT NULL,
	`sent_at` text,
	`lease_until` text,
	`no_retry` integer DEFAULT 0 NOT NULL,
	`forced` integer DEFAULT 0 NOT NULL,
	`job_id` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attempts_due` ON `delivery_attempts` (`destination_id`,`scheduled_at`) WHERE status = 'queued';--> statement-breakpoint
CREATE INDEX `attempts_due_time` ON `delivery_attempts` (`scheduled_at`,`destination_id`) WHERE status = 'queued';--> statement-breakpoint
CREATE INDEX `attempts_leased` ON `delivery_attempts` (`lease_until`) WHERE status = 'delivering';--> statement-breakpoint
CREATE INDEX `attempts_event` ON `delivery_attempts` (`event_id`);--> statement-breakpoint
CREATE INDEX `attempts_scope_created` ON `delivery_attempts` (`org_id`,`env_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `attempts_destination` ON `delivery_attempts` (`destination_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `attempts_dlq` ON `delivery_attempts` (`destination_id`) WHERE is_dlq = 1;--> statement-breakpoint
CREATE INDEX `attempts_job` ON `delivery_attempts` (`job_id`,`status`) WHERE job_id is not null;--> statement-breakpoint
CREATE INDEX `attempts_dlq_scope` ON `delivery_attempts` (`org_id`,`env_id`) WHERE is_dlq = 1;--> statement-breakpoint
CREATE TABLE `destinations` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`http_method` text DEFAULT 'POST' NOT NULL,
	`headers` text,
	`auth_type` text DEFAULT 'none' NOT NULL,
	`auth_config` text,
	`timeout_ms` integer DEFAULT 30000 NOT NULL,
	`rate_limit_per_second` integer,
	`max_retries` integer DEFAULT 8 NOT NULL,
	`retry_strategy` text DEFAULT 'exponential' NOT NULL,
	`retry_interval_seconds` integer DEFAULT 30 NOT NULL,
	`signing_secret` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`application_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `destinations_scope` ON `destinations` (`org_id`,`env_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `destinations_application` ON `destinations` (`application_id`);--> statement-breakpoint
CREATE TABLE `environments` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `environments_org_name` ON `environments` (`org_id`,`name`);--> statement-breakpoint
CREATE TABLE `event_types` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`json_schema` text,
	`status` text DEFAULT 'active' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`env_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_types_name` ON `event_types` (`org_id`,`env_id`,`name`);--> statement-breakpoint
CREATE INDEX `event_types_scope` ON `event_types` (`org_id`,`env_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`source_id` text NOT NULL,
	`method` text NOT NULL,
	`path` text,
	`query` text,
	`content_type` text,
	`source_ip` text,
	`headers` text NOT NULL,
	`body` blob NOT NULL,
	`payload_size` integer NOT NULL,
	`verification_status` text NOT NULL,
	`verification_error` text,
	`dedup_status` text NOT NULL,
	`dedup_key` text,
	`duplicate_of` text,
	`status` text NOT NULL,
	`schema_errors` text,
	`event_type` text,
	`received_at` text NOT NULL,
	`routed_at` text,
	FOREIGN KEY (`source_id`) REFERENCES `sources`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_scope_received` ON `events` (`org_id`,`env_id`,`received_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_source_received` ON `events` (`source_id`,`received_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_dedup` ON `events` (`source_id`,`dedup_key`,`received_at`) WHERE "events"."dedup_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `events_received` ON `events` (`received_at`);--> statement-breakpoint
CREATE INDEX `events_unrouted` ON `events` (`status`,`routed_at`) WHERE "events"."routed_at" IS NULL;--> statement-breakpoint
CREATE TABLE `issues` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`fingerprint` text NOT NULL,
	`title` text NOT NULL,
	`status` text NOT NULL,
	`snoozed_until` text,
	`occurrence_count` integer DEFAULT 0 NOT NULL,
	`first_seen_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`resolved_at` text,
	`last_attempt_id` text,
	`last_event_id` text,
	`last_error` text,
	`last_status_code` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`destination_id`) REFERENCES `destinations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issues_fingerprint` ON `issues` (`fingerprint`);--> statement-breakpoint
CREATE INDEX `issues_destination_status` ON `issues` (`destination_id`,`status`);--> statement-breakpoint
CREATE INDEX `issues_scope_created` ON `issues` (`org_id`,`env_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `issues_scope_status` ON `issues` (`org_id`,`env_id`,`status`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`kind` text NOT NULL,
	`params` text NOT NULL,
	`status` text NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`processed` integer DEFAULT 0 NOT NULL,
	`succeeded` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`cursor` text,
	`started_at` text NOT NULL,
	`completed_at` text,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_status` ON `jobs` (`status`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`application_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`idempotency_key` text,
	`status` text NOT NULL,
	`outstanding` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_event` ON `messages` (`event_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_idempotency` ON `messages` (`application_id`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `messages_application_created` ON `messages` (`application_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_application_type` ON `messages` (`application_id`,`event_type`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `notification_channels` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`config` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `notification_channels_scope` ON `notification_channels` (`org_id`,`env_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_slug_unique` ON `organizations` (`slug`);--> statement-breakpoint
CREATE TABLE `record_changelog` (
	`id` text PRIMARY KEY NOT NULL,
	`collection_id` text NOT NULL,
	`record_id` text NOT NULL,
	`record_key` text NOT NULL,
	`change_type` text NOT NULL,
	`before_data` text,
	`after_data` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`collection_id`) REFERENCES `collections`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `record_changelog_key` ON `record_changelog` (`collection_id`,`record_key`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `sources` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`template` text,
	`verification_enabled` integer DEFAULT 0 NOT NULL,
	`verification_type` text,
	`verification_secret` text,
	`verification_header` text,
	`verification_config` text,
	`dedup_enabled` integer DEFAULT 0 NOT NULL,
	`dedup_strategy` text,
	`dedup_field` text,
	`dedup_window_seconds` integer DEFAULT 3600 NOT NULL,
	`ip_allowlist` text,
	`ip_denylist` text,
	`status` text DEFAULT 'active' NOT NULL,
	`event_count` integer DEFAULT 0 NOT NULL,
	`request_count` integer DEFAULT 0 NOT NULL,
	`last_event_at` text,
	`is_ephemeral` integer DEFAULT 0 NOT NULL,
	`expires_at` text,
	`request_limit` integer,
	`type` text DEFAULT 'webhook' NOT NULL,
	`source_config` text,
	`schema_validation_enabled` integer DEFAULT 0 NOT NULL,
	`json_schema` text,
	`schema_action` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`env_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sources_scope` ON `sources` (`org_id`,`env_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `sources_slug` ON `sources` (`org_id`,`env_id`,`slug`);--> statement-breakpoint
CREATE TABLE `topics` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`source_id` text NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`description` text,
	`schema` text,
	`status` text DEFAULT 'active' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`env_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`source_id`) REFERENCES `sources`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `topics_slug` ON `topics` (`org_id`,`env_id`,`slug`);--> statement-breakpoint
CREATE INDEX `topics_scope` ON `topics` (`org_id`,`env_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `topics_source` ON `topics` (`source_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`env_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);
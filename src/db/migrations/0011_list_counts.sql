CREATE TABLE `attempt_counts` (
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`connection_id` text NOT NULL,
	`status` text NOT NULL,
	`is_dlq` integer NOT NULL,
	`trigger_type` text NOT NULL,
	`shard` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`org_id`, `env_id`, `destination_id`, `connection_id`, `status`, `is_dlq`, `trigger_type`, `shard`)
);
--> statement-breakpoint
CREATE TABLE `event_counts` (
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`source_id` text NOT NULL,
	`status` text NOT NULL,
	`verification_status` text NOT NULL,
	`dedup_status` text NOT NULL,
	`method` text NOT NULL,
	`shard` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`org_id`, `env_id`, `source_id`, `status`, `verification_status`, `dedup_status`, `method`, `shard`)
);
--> statement-breakpoint
DROP INDEX `attempts_dlq_scope`;--> statement-breakpoint
CREATE INDEX `attempts_scope_failed` ON `delivery_attempts` (`org_id`,`env_id`,`created_at`,`id`) WHERE status = 'failed';--> statement-breakpoint
CREATE INDEX `attempts_dlq_scope` ON `delivery_attempts` (`org_id`,`env_id`,`created_at`,`id`) WHERE is_dlq = 1;--> statement-breakpoint
CREATE INDEX `events_scope_status_received` ON `events` (`org_id`,`env_id`,`status`,`received_at`,`id`) WHERE status <> 'delivered';
DROP INDEX `attempts_dlq_scope`;--> statement-breakpoint
CREATE INDEX `attempts_dlq_scope` ON `delivery_attempts` (`org_id`,`env_id`,`created_at`,`id`) WHERE is_dlq = 1;
ALTER TABLE `alert_history` ADD `status` text DEFAULT 'triggered' NOT NULL;--> statement-breakpoint
ALTER TABLE `alert_rules` ADD `firing_since` text;--> statement-breakpoint
ALTER TABLE `alert_rules` ADD `reported_until` text;--> statement-breakpoint
ALTER TABLE `alert_rules` ADD `reported_until_id` text;
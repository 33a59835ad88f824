CREATE TABLE `nodes` (
	`id` text PRIMARY KEY NOT NULL,
	`version` text NOT NULL,
	`hostname` text NOT NULL,
	`pid` integer NOT NULL,
	`address` text NOT NULL,
	`started_at` text NOT NULL,
	`last_heartbeat_at` text NOT NULL,
	`stopped_at` text
);
--> statement-breakpoint
CREATE INDEX `nodes_heartbeat` ON `nodes` (`last_heartbeat_at`);--> statement-breakpoint
ALTER TABLE `delivery_attempts` ADD `claimed_by` text;
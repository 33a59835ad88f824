ALTER TABLE `application_endpoints` ADD `ordered` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `application_endpoints` ADD `on_dlq` text DEFAULT 'continue' NOT NULL;--> statement-breakpoint
ALTER TABLE `connections` ADD `ordered` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `connections` ADD `ordering_key` text;--> statement-breakpoint
ALTER TABLE `connections` ADD `on_dlq` text DEFAULT 'continue' NOT NULL;--> statement-breakpoint
ALTER TABLE `delivery_attempts` ADD `ordering_lane` text;--> statement-breakpoint
ALTER TABLE `delivery_attempts` ADD `ordering_key` text;--> statement-breakpoint
ALTER TABLE `delivery_attempts` ADD `ordering_hold` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `attempts_lane` ON `delivery_attempts` (`ordering_lane`,`scheduled_at`,`event_id`) WHERE ordering_lane is not null and (status in ('queued', 'delivering', 'held') or (is_dlq = 1 and ordering_hold = 1));--> statement-breakpoint
ALTER TABLE `messages` ADD `ordering_key` text;
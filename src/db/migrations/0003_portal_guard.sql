ALTER TABLE `application_endpoints` ADD `portal_held` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `applications` ADD `allow_private_endpoints` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `applications` ADD `portal_generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `applications` ADD `portal_resend_window` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `portal_resend_count` integer DEFAULT 0 NOT NULL;
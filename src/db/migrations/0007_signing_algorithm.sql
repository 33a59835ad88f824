ALTER TABLE `destinations` ADD `signing_algorithm` text DEFAULT 'hmac-sha256' NOT NULL;--> statement-breakpoint
ALTER TABLE `application_endpoints` DROP COLUMN `signing_algorithm`;
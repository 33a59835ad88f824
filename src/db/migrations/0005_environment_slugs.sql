-- Written by hand (drizzle-kit generate --custom): SQLite cannot add a NOT NULL column without a default, and existing environments need a slug before the unique index. The slug is the name in lower case with spaces as dashes; where two would meet in one organization, or the name leaves nothing, the id's first 8 characters tell them apart.
ALTER TABLE `environments` ADD `slug` text NOT NULL DEFAULT '';--> statement-breakpoint
ALTER TABLE `environments` ADD `updated_at` text NOT NULL DEFAULT '';--> statement-breakpoint
UPDATE `environments` SET `slug` = lower(replace(trim(`name`), ' ', '-')), `updated_at` = `created_at`;--> statement-breakpoint
UPDATE `environments` SET `slug` = 'env-' || substr(`id`, 1, 8) WHERE `slug` = '';--> statement-breakpoint
UPDATE `environments` SET `slug` = `slug` || '-' || substr(`id`, 1, 8) WHERE EXISTS (SELECT 1 FROM `environments` AS e2 WHERE e2.`org_id` = `environments`.`org_id` AND e2.`slug` = `environments`.`slug` AND e2.`id` < `environments`.`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `environments_org_slug` ON `environments` (`org_id`,`slug`);

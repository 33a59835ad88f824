CREATE TABLE `attempt_hours` (
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`hour` text NOT NULL,
	`destination_id` text NOT NULL,
	`status` text NOT NULL,
	`bucket` integer NOT NULL,
	`shard` integer NOT NULL,
	`n` integer NOT NULL,
	`sum_ms` integer NOT NULL,
	`min_ms` integer,
	`max_ms` integer,
	PRIMARY KEY(`org_id`, `env_id`, `hour`, `destination_id`, `status`, `bucket`, `shard`)
);
--> statement-breakpoint
CREATE TABLE `duration_buckets` (
	`lower_ms` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `event_hours` (
	`org_id` text NOT NULL,
	`env_id` text NOT NULL,
	`hour` text NOT NULL,
	`status` text NOT NULL,
	`shard` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`org_id`, `env_id`, `hour`, `status`, `shard`)
);

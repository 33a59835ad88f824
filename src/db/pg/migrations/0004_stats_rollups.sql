CREATE TABLE "attempt_hours" (
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"hour" text NOT NULL,
	"destination_id" text NOT NULL,
	"status" text NOT NULL,
	"bucket" bigint NOT NULL,
	"shard" bigint NOT NULL,
	"n" bigint NOT NULL,
	"sum_ms" bigint NOT NULL,
	"min_ms" bigint,
	"max_ms" bigint,
	CONSTRAINT "attempt_hours_pk" PRIMARY KEY("org_id","env_id","hour","destination_id","status","bucket","shard")
);
--> statement-breakpoint
CREATE TABLE "duration_buckets" (
	"lower_ms" bigint PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_hours" (
	"org_id" text NOT NULL,
	"env_id" text NOT NULL,
	"hour" text NOT NULL,
	"status" text NOT NULL,
	"shard" bigint NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "event_hours_pk" PRIMARY KEY("org_id","env_id","hour","status","shard")
);

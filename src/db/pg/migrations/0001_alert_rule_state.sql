ALTER TABLE "alert_history" ADD COLUMN "status" text DEFAULT 'triggered' NOT NULL;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "firing_since" text;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "reported_until" text;--> statement-breakpoint
ALTER TABLE "alert_rules" ADD COLUMN "reported_until_id" text;
ALTER TABLE "application_endpoints" ADD COLUMN "portal_held" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "allow_private_endpoints" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "portal_generation" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "portal_resend_window" text;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "portal_resend_count" bigint DEFAULT 0 NOT NULL;
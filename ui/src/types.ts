/** API shapes, taken from src/contracts (types only: nothing of the server is bundled). */
import type { z } from "zod";
import type { sourceTemplate } from "../../src/contracts/sources";
import type { eventAttemptSummary, eventList, EventDetail as EventDetailDto } from "../../src/contracts/events";
import type { DeliveryAttempt as DeliveryAttemptDto } from "../../src/contracts/deliveryAttempts";
import type { JobProgress as JobProgressDto } from "../../src/contracts/jobs";

export type { SourceDto as Source, CreateSourceInput, UpdateSourceInput } from "../../src/contracts/sources";
export type { EventListItem } from "../../src/contracts/events";
export type { Destination, CreateDestinationInput } from "../../src/contracts/destinations";
export type { Connection, FilterRule, FilterOperator } from "../../src/contracts/connections";
export type { TopicDto as Topic } from "../../src/contracts/topics";
export type { EventTypeDto as EventType } from "../../src/contracts/eventTypes";
export type { ApplicationDto as Application, ApplicationListItem } from "../../src/contracts/applications";
export type { EndpointDto as Endpoint } from "../../src/contracts/endpoints";
export type { MessageDto as Message } from "../../src/contracts/messages";
export type { PortalLinkDto as PortalLink, PortalSessionDto as PortalSession } from "../../src/contracts/portal";
export type { CollectionDto as Collection, RecordDto as CollectionRecord, ChangelogEntryDto as ChangelogEntry } from "../../src/contracts/collections";
export type { Issue, IssueStatus } from "../../src/contracts/issues";
export type { AlertRule, AlertHistoryEntry, ChannelNotified, RuleType, RuleConfigs } from "../../src/contracts/alertRules";
export type { ChannelListItem as Channel, ChannelDetail, ChannelType } from "../../src/contracts/notificationChannels";

export type SourceTemplate = z.infer<typeof sourceTemplate>;
export type Pagination = z.infer<typeof eventList>["pagination"];

export type DeliveryAttempt = DeliveryAttemptDto;
export type EventAttemptSummary = z.infer<typeof eventAttemptSummary>;
export type EventDetail = EventDetailDto;
export type JobProgress = JobProgressDto;

/** Enum values the UI offers in selects (mirrors of the contracts' lists; importing the values would bundle zod). */
export const EVENT_STATUSES = ["pending", "delivered", "failed", "held", "rejected", "ignored"] as const;
export const VERIFICATION_STATUSES = ["verified", "failed", "skipped"] as const;
export const DEDUP_STATUSES = ["unique", "duplicate", "skipped"] as const;
export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export const SOURCE_STATUSES = ["active", "paused", "disabled"] as const;
export const VERIFICATION_TYPES = ["hmac-sha256", "hmac-sha1", "standard-webhooks", "twilio", "token"] as const;
export const DEDUP_STRATEGIES = ["body_hash", "header", "field"] as const;
export const AUTH_TYPES = ["none", "basic", "bearer", "api_key"] as const;
export const RETRY_STRATEGIES = ["exponential", "linear"] as const;
export const DESTINATION_STATUSES = ["active", "paused", "disabled"] as const;
export const SIGNING_ALGORITHMS = ["hmac-sha256", "ed25519"] as const;
export const FILTER_OPERATORS = ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists", "regex"] as const;
export const ATTEMPT_STATUSES = ["queued", "delivering", "success", "failed", "held"] as const;
export const TRIGGER_TYPES = ["initial", "retry", "manual", "bulk_retry", "replay", "redrive", "recover"] as const;
export const TOPIC_STATUSES = ["active", "paused"] as const;
export const EVENT_TYPE_STATUSES = ["active", "deprecated"] as const;
export const ISSUE_STATUSES = ["open", "acknowledged", "resolved", "ignored"] as const;
export const RULE_TYPES = ["failure_rate", "latency", "dlq", "volume_drop", "issue_opened"] as const;
export const CHANNEL_TYPES = ["webhook", "slack", "discord", "email"] as const;
/** What a secret reads as in answers; sent back unchanged, the server keeps the stored value. */
export const MASK = "********";
export const APPLICATION_STATUSES = ["active", "disabled"] as const;
export const MESSAGE_STATUSES = ["pending", "delivered", "failed", "ignored"] as const;

import { z } from "zod";
import { deliveryAttempt } from "./deliveryAttempts";
import { pageQuery, paginationBody as pagination } from "./pagination";

/** Issues (spec: Issue; docs/decisions.md D8): repeated delivery failures of one class to one destination. */

export const ISSUE_STATUSES = ["open", "acknowledged", "resolved", "ignored"] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];

export const listIssuesQuery = pageQuery.extend({
  status: z.enum(ISSUE_STATUSES).optional(),
  destination_id: z.string().max(200).optional(),
});
export type ListIssuesQuery = z.infer<typeof listIssuesQuery>;

const isoDateTime = z
  .string()
  .max(100)
  .refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date-time");

export const updateIssueInput = z.object({
  status: z.enum(ISSUE_STATUSES).optional(),
  /** Until then the issue sends no issue_opened alert when it reopens; null ends a snooze. */
  snoozed_until: isoDateTime.nullable().optional(),
});
export type UpdateIssueInput = z.infer<typeof updateIssueInput>;

export const issue = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  destination_id: z.string(),
  fingerprint: z.string().describe("`<destination id>:<failure class>`, the class being http_<status>, timeout, connection_error or transform_error"),
  title: z.string(),
  status: z.string().describe("open, acknowledged, resolved or ignored"),
  snoozed_until: z.string().nullable(),
  occurrence_count: z.number().int().describe("Failed attempts of this class to this destination"),
  first_seen_at: z.string(),
  last_seen_at: z.string(),
  resolved_at: z.string().nullable(),
  last_attempt_id: z.string().nullable(),
  last_event_id: z.string().nullable(),
  last_error: z.string().nullable(),
  last_status_code: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  destination_name: z.string().nullable(),
});
export type Issue = z.infer<typeof issue>;

export const issueList = z.object({ issues: z.array(issue), pagination });
export const issueBody = z.object({ issue });
export const issueDetail = z.object({
  issue,
  last_attempt: deliveryAttempt.nullable().describe("The issue's last failed attempt with its request and response; null once retention pruned it"),
});

import { z } from "zod";
import { fromJsonText } from "./common";
import { limitParam } from "./pagination";

/** Collections (docs/decisions.md D11): the current state of every record a source's events describe, with each record's changelog. */

export const MAX_TRANSFORM_LENGTH = 64 * 1024;
/** Longer keys are counted as missing: a key is an identifier, not data. */
export const MAX_RECORD_KEY_LENGTH = 500;

/** `data.id`, `data.object.customer`, `items.0.sku`: segments separated by dots, none empty. */
export const dotPath = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .transform((p) => p.replace(/\[(\d+)\]/g, ".$1"))
  .refine((p) => p.split(".").every((s) => s !== ""), "must be a dot path such as data.id");

/** A list of event type names: an array, its JSON text, or null (every type). */
const typeList = z.preprocess(fromJsonText, z.array(z.string().trim().min(1).max(200)).max(500).nullable());

const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(5000).nullable(),
  source_id: z.string().min(1).max(100),
  event_types: typeList,
  event_type_path: dotPath,
  key_path: dotPath,
  transform_expression: z.string().max(MAX_TRANSFORM_LENGTH).nullable(),
  delete_event_types: typeList,
};

export const createCollectionInput = z.object({
  ...z.object(fields).partial().shape,
  source_id: fields.source_id,
  key_path: fields.key_path,
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
});
export type CreateCollectionInput = z.input<typeof createCollectionInput>;

export const updateCollectionInput = z.object(fields).partial();
export type UpdateCollectionInput = z.input<typeof updateCollectionInput>;

export const listCollectionsQuery = z.object({
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  source_id: z.string().max(100).optional(),
});
export type ListCollectionsQuery = z.infer<typeof listCollectionsQuery>;

export const BUILD_STATUSES = ["backfilling", "live"] as const;

export const collection = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  source_id: z.string(),
  source_name: z.string().nullable(),
  event_types: z.string().nullable().describe("JSON array of event type names, encoded as a string; null: every type"),
  event_type_path: z.string(),
  key_path: z.string(),
  transform_expression: z.string().nullable(),
  delete_event_types: z.string().nullable().describe("JSON array of event type names, encoded as a string"),
  record_count: z.number().int(),
  build_status: z.enum(BUILD_STATUSES).describe("backfilling until the events stored before the collection was created (or rebuilt) are handled, then live"),
  /** The builder's position: the last event handled (events are handled in received order). */
  position_event_id: z.string().nullable(),
  position_at: z.string().nullable(),
  /** Stored events of the source the builder has not handled yet. */
  events_pending: z.number().int(),
  /** Every event handled, including the ignored, keyless and failed ones below. */
  events_processed: z.number().int(),
  /** Events whose type is neither in event_types nor in delete_event_types. */
  events_ignored: z.number().int(),
  /** Events without a string or number at key_path. */
  events_missing_key: z.number().int(),
  events_transform_failed: z.number().int(),
  last_error: z.string().nullable(),
  last_error_event_id: z.string().nullable(),
  last_error_at: z.string().nullable(),
  /** The backlog: events stored before the collection was created (or rebuilt), and how many of them are handled. */
  backfill_total: z.number().int(),
  backfill_processed: z.number().int(),
  backfill_completed_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type CollectionDto = z.infer<typeof collection>;

export const collectionBody = z.object({ collection });
export const collectionList = z.object({ collections: z.array(collection) });

export const listRecordsQuery = z.object({
  search: z.string().max(500).optional(),
  cursor: z.string().max(2000).optional(),
  limit: limitParam,
  event_type: z.string().max(200).optional(),
});
export type ListRecordsQuery = z.infer<typeof listRecordsQuery>;

export const record = z.object({
  id: z.string(),
  collection_id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  record_key: z.string(),
  data: z.string().describe("JSON, encoded as a string"),
  event_type: z.string().nullable(),
  source_event_id: z.string(),
  source_event_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RecordDto = z.infer<typeof record>;

export const recordList = z.object({ records: z.array(record), has_more: z.boolean(), next_cursor: z.string().nullable() });
export const recordBody = z.object({ record });

export const CHANGE_TYPES = ["created", "updated", "deleted"] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export const changelogEntry = z.object({
  id: z.string(),
  collection_id: z.string(),
  record_id: z.string(),
  record_key: z.string(),
  change_type: z.enum(CHANGE_TYPES),
  before_data: z.string().nullable().describe("JSON, encoded as a string; null for created"),
  after_data: z.string().describe('JSON, encoded as a string; "null" for deleted'),
  event_id: z.string(),
  event_type: z.string().nullable(),
  created_at: z.string(),
});
export type ChangelogEntryDto = z.infer<typeof changelogEntry>;

export const changelogQuery = z.object({ limit: limitParam });
export const changelogList = z.object({ changelog: z.array(changelogEntry) });

export const recordParams = z.object({ id: z.string(), key: z.string().describe("The record key (URL-encoded)") });

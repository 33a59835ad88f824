import { z } from "zod";
import { flag } from "./common";
import { fromJsonText } from "./common";
import { errorMessage } from "./errors";

/** Connections (spec: Connection; docs/decisions.md D6): source → destination, with filter rules and a JSONata transform. */

export const FILTER_OPERATORS = ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists", "regex"] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const MAX_FILTER_RULES = 100;
export const MAX_TRANSFORM_LENGTH = 64 * 1024;

export interface FilterRule {
  /** `body`, `body.<path>`, `headers.<name>`, `query.<name>`, `method` or `path`. */
  field: string;
  operator: FilterOperator;
  value?: unknown;
}

const FIELD = /^(method|path|body(\.[^.]+)*|headers\..+|query\..+)$/;

/**
 * `items[0].id` is accepted as `items.0.id`; header names are matched
 * lower-case, as events store them; `method` values upper-case.
 */
export function normalizeRuleField(field: string): string {
  const dotted = field.trim().replace(/\[(\d+)\]/g, ".$1");
  return dotted.startsWith("headers.") ? dotted.toLowerCase() : dotted;
}

const primitive = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/**
 * Regex values are JavaScript pattern source. A leading `(?i)`, `(?s)`,
 * `(?m)` (or a mix, `(?im)`) sets those flags, as in PCRE and RE2; a
 * `/…/flags` form is not used because `/hooks/orders` is a path, not a regex.
 */
export function regexParts(value: string): { source: string; flags: string } {
  const m = /^\(\?([ims]+)\)/.exec(value);
  return m ? { source: value.slice(m[0].length), flags: [...new Set(m[1])].join("") } : { source: value, flags: "" };
}

function checkValue(rule: { operator: FilterOperator; value?: unknown }, has: boolean): string | null {
  const v = rule.value;
  switch (rule.operator) {
    case "eq":
    case "neq":
      return has ? null : "value is required for eq and neq";
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return typeof v === "number" || (typeof v === "string" && v !== "") ? null : `value must be a number or a non-empty string for ${rule.operator}`;
    case "contains":
      return primitive.safeParse(v).success && v !== null && has ? null : "value must be a string, number or boolean for contains";
    case "in":
      return Array.isArray(v) && v.length > 0 && v.length <= 1000 && v.every((x) => primitive.safeParse(x).success)
        ? null
        : "value must be a non-empty array (at most 1000) of strings, numbers, booleans or null for in";
    case "exists":
      return !has || typeof v === "boolean" ? null : "value must be true or false for exists (default true)";
    case "regex": {
      if (typeof v !== "string" || v === "") return "value must be a non-empty regular expression string for regex";
      if (v.length > 1000) return "regular expression must be at most 1000 characters";
      try {
        const { source, flags } = regexParts(v);
        new RegExp(source, flags);
        return null;
      } catch (e) {
        return `invalid regular expression: ${errorMessage(e)}`;
      }
    }
  }
}

/** One rule, checked completely: unknown operators, bad roots, missing or ill-typed values, bad regexes. */
export const filterRule = z
  .object({
    field: z
      .string()
      .min(1)
      .max(500)
      .transform(normalizeRuleField)
      .refine((f) => FIELD.test(f), "must be method, path, body, body.<path>, headers.<name> or query.<name>"),
    operator: z.enum(FILTER_OPERATORS),
    value: z.unknown().optional(),
  })
  .superRefine((rule, ctx) => {
    const problem = checkValue(rule, rule.value !== undefined);
    if (problem) ctx.addIssue({ code: "custom", path: ["value"], message: problem });
  })
  .transform((rule): FilterRule => {
    const out: FilterRule = { field: rule.field, operator: rule.operator };
    if (rule.value !== undefined) out.value = rule.field === "method" ? upperStrings(rule.value) : rule.value;
    return out;
  });

function upperStrings(v: unknown): unknown {
  if (typeof v === "string") return v.toUpperCase();
  if (Array.isArray(v)) return v.map(upperStrings);
  return v;
}

/** filter_rules as given on input: an array of rules, its JSON text, or null (no rules: every event matches). */
export const filterRules = z.preprocess(fromJsonText, z.array(filterRule).max(MAX_FILTER_RULES).nullable());

export const transformExpression = z.string().max(MAX_TRANSFORM_LENGTH).nullable();

export const ON_DLQ = ["continue", "block"] as const;
export type OnDlq = (typeof ON_DLQ)[number];

/** An ordering key path: a filter-rule field (body.<path>, headers.<name>, query.<name>, method, path), or null (one line). */
export const orderingKeyPath = z
  .string()
  .min(1)
  .max(500)
  .transform(normalizeRuleField)
  .refine((f) => FIELD.test(f), "must be method, path, body, body.<path>, headers.<name> or query.<name>")
  .nullable();

const connectionFields = {
  source_id: z.string().min(1).max(100),
  destination_id: z.string().min(1).max(100),
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable(),
  filter_rules: filterRules,
  enabled: flag,
  transform_enabled: flag,
  transform_expression: transformExpression,
  ordered: flag,
  ordering_key: orderingKeyPath,
  on_dlq: z.enum(ON_DLQ),
};

export const createConnectionInput = z.object({
  source_id: connectionFields.source_id,
  destination_id: connectionFields.destination_id,
  name: connectionFields.name,
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  description: connectionFields.description.optional(),
  filter_rules: connectionFields.filter_rules.optional(),
  enabled: connectionFields.enabled.optional(),
  transform_enabled: connectionFields.transform_enabled.optional(),
  transform_expression: connectionFields.transform_expression.optional(),
  ordered: connectionFields.ordered.optional(),
  ordering_key: connectionFields.ordering_key.optional(),
  on_dlq: connectionFields.on_dlq.optional(),
});
export type CreateConnectionInput = z.infer<typeof createConnectionInput>;

export const updateConnectionInput = z.object(connectionFields).partial();
export type UpdateConnectionInput = z.infer<typeof updateConnectionInput>;

const flagQuery = z
  .enum(["0", "1", "true", "false"])
  .transform((v) => v === "1" || v === "true")
  .optional();

export const listConnectionsQuery = z.object({
  source_id: z.string().max(100).optional(),
  destination_id: z.string().max(100).optional(),
  enabled: flagQuery,
});
export type ListConnectionsQuery = z.infer<typeof listConnectionsQuery>;

export const connection = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  source_id: z.string(),
  destination_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  enabled: z.number().int(),
  filter_rules: z.string().nullable().describe("JSON array of {field, operator, value}, encoded as a string"),
  status: z.string(),
  event_count: z.number().int(),
  last_event_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  transform_enabled: z.number().int(),
  transform_expression: z.string().nullable(),
  source_name: z.string().nullable(),
  destination_name: z.string().nullable(),
  ordered: z.boolean().describe("Events are delivered one at a time per ordering key, in the order received (docs/delivery.md, Ordered delivery)"),
  ordering_key: z.string().nullable().describe("The field path giving each event's key (filter-rule syntax); null: the whole connection is one line"),
  on_dlq: z.enum(ON_DLQ).describe("continue: a key whose head reached the DLQ moves on; block: it waits for a redrive or a skip"),
});
export type Connection = z.infer<typeof connection>;

export const connectionBody = z.object({ connection: connection.nullable() });
export const connectionList = z.object({ connections: z.array(connection) });

/** The UI's "test transform against a stored event" preview. */
export const testTransformInput = z
  .object({
    transform_expression: z.string().min(1).max(MAX_TRANSFORM_LENGTH),
    event_id: z.string().max(100).optional(),
    /** The parsed body to transform, when no event_id is given. */
    body: z.unknown().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    query: z.record(z.string(), z.string()).optional(),
    method: z.string().max(16).optional(),
  })
  .refine((v) => v.event_id !== undefined || v.body !== undefined, { message: "give event_id or body", path: ["event_id"] });
export type TestTransformInput = z.infer<typeof testTransformInput>;

export const testTransformResult = z.object({ result: z.unknown() });

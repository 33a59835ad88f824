import { filterRules, regexParts, type FilterRule } from "../contracts/connections";
import { AppError, zodProblems } from "../contracts/errors";
import { sandbox } from "./sandbox";

export type { FilterRule } from "../contracts/connections";

/** What a rule can look at: the stored request, body already parsed (see eventView.ts). */
export interface FilterRequest {
  body: unknown;
  headers: Record<string, string>;
  query: Record<string, string>;
  method: string;
  path: string;
}

/**
 * Checks and normalizes filter_rules (an array, its JSON text, or null for
 * none). Invalid rules throw validation_error listing each bad rule part,
 * e.g. `{field: "filter_rules.0.operator", message}`.
 */
export function parseFilterRules(input: unknown, fieldPrefix = "filter_rules"): FilterRule[] {
  if (input === undefined) return [];
  const parsed = filterRules.safeParse(input);
  if (!parsed.success) {
    throw new AppError("validation_error", "Invalid filter rules", zodProblems(parsed.error, [fieldPrefix]));
  }
  return parsed.data ?? [];
}

/** A regex rule's test, left for the sandbox: the pattern as stored and the field's text. */
export interface RegexCheck {
  pattern: string;
  text: string;
}

/** A regex check that missed its deadline (docs/delivery.md, "Limits of transforms and filters"). */
export class FilterLimitError extends Error {}

/**
 * Every rule must match; no rules match everything. Regex rules run in the
 * sandbox (sandbox.ts) under a deadline: a pattern that backtracks without
 * end on provider-controlled text must not hold the process. A regex that
 * misses the deadline throws FilterLimitError.
 */
export async function matchesFilter(rules: readonly FilterRule[], request: FilterRequest, opts: { timeoutMs?: number } = {}): Promise<boolean> {
  const checks = filterChecks(rules, request);
  if (checks === false) return false;
  return regexChecksInSandbox(checks, opts.timeoutMs);
}

/** Runs regex checks in the sandbox: true when every one matches (none: true). */
export async function regexChecksInSandbox(checks: readonly RegexCheck[], timeoutMs = REGEX_TIMEOUT_MS): Promise<boolean> {
  if (checks.length === 0) return true;
  const reply = await sandbox().submit({ op: "regex", checks: [...checks] }, timeoutMs);
  if (reply.ok) return reply.value === true;
  if (reply.failure.kind === "error") throw new Error(reply.failure.message);
  throw new FilterLimitError(`regex filter stopped: it ${reply.failure.kind === "time" ? `ran longer than ${timeoutMs} ms` : reply.failure.message}`);
}

/**
 * How long one event's regex rules may take together. Short: a sane pattern
 * takes microseconds, and JavaScriptCore gives up on a backtracking one by
 * itself only after most of a second, answering "no match".
 */
export const REGEX_TIMEOUT_MS = 250;

/**
 * Every rule but the regex ones, in this thread: false when one fails,
 * else the regex tests still to run (an empty list: the filter matches).
 */
export function filterChecks(rules: readonly FilterRule[], request: FilterRequest): false | RegexCheck[] {
  const checks: RegexCheck[] = [];
  for (const rule of rules) {
    if (rule.operator === "regex") {
      const actual = resolveField(fieldPath(rule.field), request);
      if (typeof actual !== "string" && typeof actual !== "number" && typeof actual !== "boolean") return false;
      if (typeof rule.value !== "string") return false;
      checks.push({ pattern: rule.value, text: String(actual) });
    } else if (!matchesRule(rule, request)) return false;
  }
  return checks;
}

/** In the sandbox only: whether every check's pattern matches its text. */
export function regexChecksPass(checks: readonly RegexCheck[]): boolean {
  return checks.every((c) => regexFor(c.pattern).test(c.text));
}

/** Whether any rule is a regex (matching then needs the sandbox). */
export function hasRegexRule(rules: readonly FilterRule[]): boolean {
  return rules.some((r) => r.operator === "regex");
}

function matchesRule(rule: FilterRule, request: FilterRequest): boolean {
  const actual = resolveField(fieldPath(rule.field), request);
  const expected = rule.value;
  switch (rule.operator) {
    case "eq":
      return actual !== undefined && looseEqual(actual, expected);
    case "neq":
      // A missing field is not equal to anything.
      return actual === undefined || !looseEqual(actual, expected);
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const c = compare(actual, expected);
      if (c === null) return false;
      return rule.operator === "gt" ? c > 0 : rule.operator === "gte" ? c >= 0 : rule.operator === "lt" ? c < 0 : c <= 0;
    }
    case "contains":
      if (typeof actual === "string") return expected !== null && expected !== undefined && actual.includes(String(expected));
      if (Array.isArray(actual)) return actual.some((item) => looseEqual(item, expected));
      return false;
    case "in":
      return actual !== undefined && Array.isArray(expected) && expected.some((item) => looseEqual(actual, item));
    case "exists":
      return (actual !== undefined) === (expected === undefined ? true : expected === true);
    case "regex":
      // Never here: filterChecks hands regex rules to the sandbox.
      return false;
  }
}

// Parsed paths and compiled regexes are cached: the same few rules run for every event.
const pathCache = new Map<string, string[]>();
const regexCache = new Map<string, RegExp>();
const CACHE_LIMIT = 2000;

function remember<V>(cache: Map<string, V>, key: string, make: () => V): V {
  let v = cache.get(key);
  if (v === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    v = make();
    cache.set(key, v);
  }
  return v;
}

/** `headers.X-Foo` and `items[0]` are normalized by parseFilterRules; this also accepts raw stored rules. */
function fieldPath(field: string): string[] {
  return remember(pathCache, field, () => {
    const dotted = field.replace(/\[(\d+)\]/g, ".$1");
    for (const root of ["headers.", "query."]) {
      // Header and query names are single keys, dots and all.
      if (dotted.startsWith(root)) return [root.slice(0, -1), root === "headers." ? dotted.slice(root.length).toLowerCase() : dotted.slice(root.length)];
    }
    return dotted.split(".");
  });
}

function regexFor(value: string): RegExp {
  return remember(regexCache, value, () => {
    const { source, flags } = regexParts(value);
    return new RegExp(source, flags);
  });
}

/** The value at a filter-rule field path (`body.customer.id`, `headers.x-shop`), undefined when missing. */
export function fieldValue(field: string, request: FilterRequest): unknown {
  return resolveField(fieldPath(field), request);
}

function resolveField(path: string[], request: FilterRequest): unknown {
  const [root, ...rest] = path;
  switch (root) {
    case "method":
      return rest.length === 0 ? request.method.toUpperCase() : undefined;
    case "path":
      return rest.length === 0 ? request.path : undefined;
    case "headers":
      return rest[0] !== undefined ? own(request.headers, rest[0]) : undefined;
    case "query":
      return rest[0] !== undefined ? own(request.query, rest[0]) : undefined;
    case "body": {
      let cur: unknown = request.body;
      for (const seg of rest) {
        if (Array.isArray(cur)) cur = /^\d+$/.test(seg) ? cur[Number(seg)] : undefined;
        else if (cur !== null && typeof cur === "object") cur = own(cur as Record<string, unknown>, seg);
        else return undefined;
      }
      return cur;
    }
    default:
      return undefined;
  }
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

/**
 * JSON equality, except that a string equals a number or boolean with the
 * same text: header and query values are always strings.
 */
function looseEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ta = typeof a;
  const tb = typeof b;
  if (ta === "string" && (tb === "number" || tb === "boolean")) return a === String(b);
  if (tb === "string" && (ta === "number" || ta === "boolean")) return b === String(a);
  if (a === null || b === null || ta !== "object" || tb !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => looseEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object);
  const ob = b as Record<string, unknown>;
  return ka.length === Object.keys(ob).length && ka.every((k) => Object.prototype.hasOwnProperty.call(ob, k) && looseEqual((a as Record<string, unknown>)[k], ob[k]));
}

function asNumber(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" && v.trim() !== "") {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** Numbers (or numeric text) compare as numbers; other strings compare as text, so ISO dates order correctly. */
function compare(actual: unknown, expected: unknown): number | null {
  const an = asNumber(actual);
  const en = asNumber(expected);
  if (an !== null && en !== null) return an - en;
  if (typeof actual === "string" && typeof expected === "string") return actual < expected ? -1 : actual > expected ? 1 : 0;
  return null;
}

import { errorMessage } from "../../src/contracts/errors";
/**
 * JSON in the admin UI: text checked as it is typed (parsed, or where and why
 * it is not JSON), and a small, readable diff of two values for a record's
 * changelog: the paths added, removed or changed, each with its values.
 * Objects are compared key by key (in any order), arrays index by index, down
 * to the values that differ; a value that changes type is one change at its path.
 */

export type JsonCheck = { ok: true; empty: boolean; value: unknown } | { ok: false; error: string };

/** Line and column (from 1) of a character offset. */
function lineColumn(text: string, offset: number) {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** The parsed value, or why the text is not JSON in words (with the line and column when the parser gives an offset). */
export function checkJson(text: string, opts: { object?: boolean } = {}): JsonCheck {
  if (text.trim() === "") return { ok: true, empty: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const raw = errorMessage(e);
    const at = /at position (\d+)/.exec(raw);
    const where = at ? lineColumn(text, Number(at[1])) : null;
    const reason = raw
      .replace(/^JSON Parse error: /, "")
      .replace(/ in JSON at position \d+.*$/, "")
      .replace(/ \(line \d+ column \d+\)$/, "");
    return { ok: false, error: `Not valid JSON${where ? ` (line ${where.line}, column ${where.column})` : ""}: ${reason}` };
  }
  if (opts.object && (typeof value !== "object" || value === null || Array.isArray(value))) return { ok: false, error: "Must be a JSON object: { … }" };
  return { ok: true, empty: false, value };
}

// ---------------------------------------------------------------- diff

export type JsonChange =
  | { kind: "added"; path: string; after: unknown }
  | { kind: "removed"; path: string; before: unknown }
  | { kind: "changed"; path: string; before: unknown; after: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Deep equality of JSON values; object keys in any order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `customer.email`, `items[0].sku`, `metadata["order id"]`: how a path reads in JavaScript. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  if (IDENTIFIER.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}

export function jsonDiff(before: unknown, after: unknown, path = ""): JsonChange[] {
  if (jsonEqual(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const out: JsonChange[] = [];
    for (const k of Object.keys(before)) {
      const p = joinPath(path, k);
      if (Object.hasOwn(after, k)) out.push(...jsonDiff(before[k], after[k], p));
      else out.push({ kind: "removed", path: p, before: before[k] });
    }
    for (const k of Object.keys(after)) if (!Object.hasOwn(before, k)) out.push({ kind: "added", path: joinPath(path, k), after: after[k] });
    return out;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const out: JsonChange[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      const p = joinPath(path, i);
      if (i >= after.length) out.push({ kind: "removed", path: p, before: before[i] });
      else if (i >= before.length) out.push({ kind: "added", path: p, after: after[i] });
      else out.push(...jsonDiff(before[i], after[i], p));
    }
    return out;
  }
  return [{ kind: "changed", path, before, after }];
}

/** A value on one line, cut at `max` characters: `"new@example.com"`, `{"a":1,…`. */
export function shortJson(value: unknown, max = 80): string {
  const text = value === undefined ? "undefined" : JSON.stringify(value);
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

/** Parses a changelog's JSON text; text that is not JSON is shown as the string it is. */
export function parseData(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Validation errors in words. The API names a bad input by its path
 * (`name`, `ip_allowlist.1`, `filter_rules.0.value`, `headers.bad header`) with
 * zod's message or our own; a form shows each next to the control it concerns,
 * phrased for a person rather than a schema.
 */

export interface FieldIssue {
  /** The path with the request part dropped: `body.ip_allowlist.1` → `ip_allowlist.1`. */
  field: string;
  message: string;
}

const sized: Record<string, string> = { string: "characters", array: "items", set: "items", map: "entries", file: "bytes" };
const typeNames: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  record: "an object",
  null: "empty",
};

/**
 * zod's default messages rephrased ("Too small: expected string to have >=1
 * characters" → "Required"); messages written by us ("must use http:// or
 * https://") keep their words and get a capital. A message that repeats its
 * own prefix ("invalid regular expression: Invalid regular expression: …") says it once.
 */
export function readableMessage(raw: string): string {
  const m = raw.trim();
  let r: RegExpExecArray | null;
  if ((r = /^Too (small|big): expected (\w+) to (?:have|be) (>=|<=|>|<|exactly )(\S+)(?: (\w+))?$/.exec(m))) {
    const [, dir, origin, op, n, unit] = r as unknown as [string, string, string, string, string, string | undefined];
    const what = unit ?? sized[origin!] ?? "";
    if (origin === "string" && dir === "small" && op === ">=" && n === "1") return "Required";
    if (origin === "array" && dir === "small" && op === ">=" && n === "1") return "Add at least one";
    const bound = op === ">=" ? "at least" : op === "<=" ? "at most" : op === ">" ? "more than" : op === "<" ? "less than" : "exactly";
    return `Must be ${bound} ${Number(n).toLocaleString()}${what ? ` ${what}` : ""}`;
  }
  if ((r = /^Invalid input: expected (\w+), received (\w+)$/.exec(m))) {
    if (r[2] === "undefined") return "Required";
    return `Must be ${typeNames[r[1]!] ?? r[1]}`;
  }
  if ((r = /^Invalid (?:option|input): expected (?:one of )?(.+)$/.exec(m))) {
    return `Must be ${r[1]!
      .split("|")
      .map((v) => v.replace(/^"(.*)"$/, "$1"))
      .join(", ")
      .replace(/, ([^,]+)$/, " or $1")}`;
  }
  if ((r = /^Unrecognized keys?: (.+)$/.exec(m))) return `Not a known setting: ${r[1]!.replace(/"/g, "")}`;
  if (/^Invalid key in (record|map)$/.test(m)) return "Not an allowed name";
  if ((r = /^Invalid string: must match pattern/.exec(m))) return "Has characters that are not allowed here";
  if ((r = /^Invalid (URL|email address|ISO datetime|ISO date)$/.exec(m))) return `Must be a valid ${r[1]}`;
  if (m === "Invalid input") return "Not a valid value";
  const repeated = /^([^:]{3,60}): \1: (.*)$/i.exec(m);
  const text = repeated ? `${repeated[1]}: ${repeated[2]}` : m;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Which form field an issue belongs to: the longest known field its path equals
 * or starts with (`filter_rules.1.value` before `filter_rules`), and what is left
 * of the path inside it.
 */
export function placeIssue(path: string, knownFields: readonly string[]): { field: string; rest: string[] } | null {
  let best: string | null = null;
  for (const f of knownFields) {
    if ((path === f || path.startsWith(f + ".")) && (best === null || f.length > best.length)) best = f;
  }
  if (best === null) return null;
  return { field: best, rest: path === best ? [] : path.slice(best.length + 1).split(".") };
}

/**
 * The message for an issue inside a field, e.g. a list item or an object key:
 * `["1"]` → "Item 2: …", `["encoding"]` → "Encoding: …", a record key named
 * by the path (`headers.bad header`) → "“bad header” is not an allowed name". A
 * message that already quotes the bad value needs no position.
 */
export function nestedMessage(rest: string[], rawMessage: string): string {
  const message = readableMessage(rawMessage);
  if (rest.length === 0) return message;
  if (/^[“"]/.test(rawMessage)) return message;
  if (/^Invalid key in /.test(rawMessage)) return `“${rest.join(".")}” is not an allowed name`;
  const where = rest.map((p) => (/^\d+$/.test(p) ? `item ${Number(p) + 1}` : p)).join(", ");
  return `${where.charAt(0).toUpperCase()}${where.slice(1)}: ${message.charAt(0).toLowerCase()}${message.slice(1)}`;
}

/** An issue no form field shows, as one line: `ip_allowlist.1` → "ip allowlist, item 2: …". */
export function issueLine(issue: FieldIssue): string {
  if (!issue.field) return readableMessage(issue.message);
  const [head, ...rest] = issue.field.split(".");
  const name = head!.replace(/_/g, " ");
  const inner = nestedMessage(rest, issue.message);
  return rest.length === 0 || /^[“"]/.test(issue.message) ? `${name}: ${inner}` : `${name}, ${inner.charAt(0).toLowerCase()}${inner.slice(1)}`;
}

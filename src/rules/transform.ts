import { heapSize } from "bun:jsc";
import jsonata from "jsonata";
import { AppError, errorMessage } from "../contracts/errors";
import { sandbox, type SandboxFailure, type SandboxReply } from "./sandbox";

/**
 * JSONata transforms (docs/delivery.md, "Transforms"): the parsed body is the input, `$headers`,
 * `$query` and `$method` are bound, the result is the delivered body.
 * Expressions are compiled here (saving a connection checks them), and
 * evaluated in the sandbox's workers (sandbox.ts) under a time and a memory
 * limit (docs/delivery.md, "Limits of transforms and filters").
 */

export interface TransformInput {
  body: unknown;
  headers: Record<string, string>;
  query: Record<string, string>;
  method: string;
}

/** What a worker gives one evaluation; the preview endpoint uses the same. */
export const DEFAULT_TRANSFORM_TIMEOUT_MS = 1000;
/** Guards against runaway recursion that jsonata's tail calls do not flatten. */
const MAX_DEPTH = 500;
/** Longest sequence an expression may build (ranges, appends): bounds memory. */
export const MAX_SEQUENCE = 1_000_000;
/** Longest string one step may build (`&`, `$pad`, `$join`, `$string`), and the longest result as JSON text. */
export const MAX_STRING_LENGTH = 10_000_000;
/** The evaluating worker's JavaScript heap, checked every few hundred steps. */
export const HEAP_LIMIT_BYTES = 256 * 1024 * 1024;
const HEAP_CHECK_EVERY_STEPS = 256;

/** A transform failed at evaluation: the attempt fails with error `transform_error` and is not retried. */
export class TransformError extends Error {
  readonly code = "transform_error" as const;
  constructor(
    message: string,
    /** JSONata's own code, e.g. T1006, D1012 (its timeout). */
    readonly jsonataCode: string | undefined,
    readonly position: number | undefined,
    readonly timedOut: boolean,
    /** A limit stopped it (time or memory) rather than an error of the expression itself. */
    readonly limit: "time" | "memory" | null = timedOut ? "time" : null,
  ) {
    super(message);
    this.name = "TransformError";
  }
}

type Compiled = jsonata.Expression;
interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
  value?: unknown;
}

/** Thrown by the size guards below; jsonata passes it through unchanged. */
class MemoryLimit extends Error {}

const cache = new Map<string, Compiled>();
const CACHE_LIMIT = 500;

/**
 * Parses an expression (cached per expression and time limit). A syntax
 * error is a validation_error (400) carrying JSONata's message and position,
 * which is what saving a connection and the preview report.
 */
export function compileTransform(expression: string, timeoutMs = DEFAULT_TRANSFORM_TIMEOUT_MS): Compiled {
  const key = `${timeoutMs}\u0000${expression}`;
  const hit = cache.get(key);
  if (hit) {
    // Re-insert: the Map's order is then least recently used first.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  if (expression.trim() === "") throw new AppError("validation_error", "Invalid JSONata expression: it is empty", [{ field: "transform_expression", message: "must not be empty" }]);
  let compiled: Compiled;
  try {
    // jsonata's own guardrails: checked on every evaluation step, per evaluation.
    compiled = jsonata(expression, { timeout: timeoutMs, stack: MAX_DEPTH, sequence: MAX_SEQUENCE });
  } catch (e) {
    const f = e as JsonataFailure;
    throw new AppError("validation_error", `Invalid JSONata expression: ${describe(f)}`, [
      { field: "transform_expression", message: f.message ?? String(e), code: f.code, position: f.position, token: f.token },
    ]);
  }
  guard(compiled);
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(key, compiled);
  return compiled;
}

/**
 * Evaluates in the sandbox: a call that outlives the time limit (a single
 * built-in call included) has its worker terminated, and one that grows
 * past the memory limit is stopped, both as TransformError with `limit` set.
 */
export async function applyTransform(expression: string, input: TransformInput, opts: { timeoutMs: number }): Promise<unknown> {
  try {
    compileTransform(expression, opts.timeoutMs);
  } catch (e) {
    throw new TransformError(errorMessage(e), undefined, undefined, false);
  }
  const reply = await sandbox().submit({ op: "transform", expression, input, timeoutMs: opts.timeoutMs }, opts.timeoutMs);
  if (reply.ok) return JSON.parse(reply.value as string) as unknown;
  throw transformFailure(reply.failure, opts.timeoutMs);
}

function transformFailure(f: SandboxFailure, timeoutMs: number): TransformError {
  switch (f.kind) {
    case "time":
      return new TransformError(
        `Transform stopped: it ran longer than the ${timeoutMs} ms time limit (check for an infinite loop, runaway recursion or a backtracking regex)`,
        f.jsonataCode,
        f.position,
        true,
        "time",
      );
    case "memory":
      return new TransformError(`Transform stopped: it exceeded the memory limit (${f.message})`, f.jsonataCode, f.position, false, "memory");
    case "error":
      return new TransformError(f.message, f.jsonataCode, f.position, false, null);
  }
}

/**
 * The evaluation itself, inside a sandbox worker (sandboxWorker.ts); the
 * result travels back as JSON text, which is what a delivery sends anyway.
 */
export async function evaluateInSandbox(expression: string, input: TransformInput, timeoutMs: number): Promise<SandboxReply> {
  let compiled: Compiled;
  try {
    compiled = compileTransform(expression, timeoutMs);
  } catch (e) {
    return { ok: false, failure: { kind: "error", message: errorMessage(e) } };
  }
  builtIns ??= await loadBuiltIns();
  try {
    const result: unknown = await compiled.evaluate(input.body, { headers: input.headers, query: input.query, method: input.method });
    // Nothing selected: deliver JSON null rather than an empty body.
    if (result === undefined) return { ok: true, value: "null" };
    checkJsonLength(result, "the result");
    return { ok: true, value: JSON.stringify(result) ?? "null" };
  } catch (e) {
    const f = e as JsonataFailure;
    if (e instanceof MemoryLimit) return { ok: false, failure: { kind: "memory", message: e.message, position: f.position } };
    if (f instanceof RangeError) {
      // JavaScriptCore's own ceiling on a string or array: a memory limit too.
      if (/out of memory|length/i.test(f.message)) return { ok: false, failure: { kind: "memory", message: f.message } };
      return { ok: false, failure: { kind: "error", message: "Transform failed: stack overflow (check for non-terminating recursion)" } };
    }
    if (f.code === "D1012") return { ok: false, failure: { kind: "time", message: `ran longer than ${timeoutMs} ms`, jsonataCode: f.code, position: f.position } };
    if (f.code === "D2015") {
      // jsonata puts the length asked for where its message says "the maximum": name the real limit.
      const asked = typeof f.value === "number" && f.value !== MAX_SEQUENCE ? `, the expression asked for ${f.value}` : "";
      return { ok: false, failure: { kind: "memory", message: `the maximum sequence length of ${MAX_SEQUENCE.toLocaleString("en-US")} was exceeded${asked}`, jsonataCode: f.code, position: f.position } };
    }
    return { ok: false, failure: { kind: "error", message: `Transform failed: ${describe(f)}`, jsonataCode: f.code, position: f.position } };
  }
}

// ---- The memory guards ------------------------------------------------------
// jsonata bounds sequences but not strings: one `$pad("", 1e8)` or a few
// doublings with `&` build gigabytes in a single step, which no deadline can
// interrupt. So the built-ins that can make a string much longer than their
// input check the length first, `&` is routed through a checked concat, and
// the worker's heap is looked at every few hundred steps.

type BuiltIn = { implementation: (...args: unknown[]) => unknown };
let builtIns: Record<"pad" | "join" | "string", BuiltIn> | null = null;

async function loadBuiltIns() {
  const get = async (name: string) => (await jsonata(`$${name}`).evaluate({})) as BuiltIn;
  return { pad: await get("pad"), join: await get("join"), string: await get("string") };
}

function tooLong(what: string, length: number): MemoryLimit {
  return new MemoryLimit(`${what} would be ${length} characters long, over the ${MAX_STRING_LENGTH} limit`);
}

function guard(compiled: Compiled) {
  routeConcat(compiled.ast() as AstNode);
  compiled.assign(CONCAT, (lhs: unknown, rhs: unknown) => {
    const l = lhs === undefined ? "" : stringOf(lhs);
    const r = rhs === undefined ? "" : stringOf(rhs);
    if (l.length + r.length > MAX_STRING_LENGTH) throw tooLong("a string joined with &", l.length + r.length);
    return l + r;
  });
  compiled.registerFunction(
    "pad",
    function (this: unknown, str: string | undefined, width: number, char?: string) {
      if (str !== undefined && Math.abs(width) > MAX_STRING_LENGTH) throw tooLong("$pad's result", Math.abs(width));
      return builtIns!.pad.implementation.call(this, str, width, char);
    },
    "<s-ns?:s>",
  );
  compiled.registerFunction(
    "join",
    function (this: unknown, strs: string[] | undefined, separator?: string) {
      if (Array.isArray(strs)) {
        const length = strs.reduce((n, s) => n + (typeof s === "string" ? s.length : 0), 0) + (separator?.length ?? 0) * Math.max(0, strs.length - 1);
        if (length > MAX_STRING_LENGTH) throw tooLong("$join's result", length);
      }
      return builtIns!.join.implementation.call(this, strs, separator);
    },
    "<a<s>s?:s>",
  );
  compiled.registerFunction(
    "string",
    function (this: unknown, arg: unknown, prettify?: boolean) {
      if (typeof arg === "object" && arg !== null) checkJsonLength(arg, "$string's result", prettify ? 3 : 1);
      return builtIns!.string.implementation.call(this, arg, prettify);
    },
    "<x-b?:s>",
  );
  let steps = 0;
  compiled.assign(EVALUATE_ENTRY as unknown as string, () => {
    if (++steps % HEAP_CHECK_EVERY_STEPS !== 0) return undefined;
    if (heapSize() <= HEAP_LIMIT_BYTES) return undefined;
    // Garbage counts until collected: only what survives a collection is over the limit.
    Bun.gc(true);
    const size = heapSize();
    if (size > HEAP_LIMIT_BYTES) throw new MemoryLimit(`the heap reached ${Math.round(size / 1048576)} MiB, over the ${HEAP_LIMIT_BYTES / 1048576} MiB limit`);
    return undefined;
  });
}

/** `&` as jsonata itself does it (its string of each side), through the length check. */
function stringOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "object" && v !== null) checkJsonLength(v, "a string joined with &");
  return builtIns!.string.implementation(v) as string;
}

const CONCAT = "__hookrelay_concat";
const EVALUATE_ENTRY = Symbol.for("jsonata.__evaluate_entry");

type AstNode = { type?: string; value?: unknown; position?: number; [k: string]: unknown };

/**
 * Rewrites each plain `a & b` of a compiled expression into a call of the
 * checked concat: jsonata evaluates the very AST `ast()` returns. A node
 * carrying more than its operands (a predicate, a grouping) is left as it is.
 */
function routeConcat(node: unknown, seen = new WeakSet<object>()) {
  if (typeof node !== "object" || node === null || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const n of node) routeConcat(n, seen);
    return;
  }
  const n = node as AstNode;
  for (const v of Object.values(n)) routeConcat(v, seen);
  if (n.type === "binary" && n.value === "&" && Object.keys(n).every((k) => k === "type" || k === "value" || k === "position" || k === "lhs" || k === "rhs")) {
    const { lhs, rhs } = n;
    delete n.lhs;
    delete n.rhs;
    Object.assign(n, { type: "function", value: "(", arguments: [lhs, rhs], procedure: { type: "variable", value: CONCAT, position: n.position } });
  }
}

/**
 * Throws MemoryLimit when `value` as JSON would be longer than the limit
 * (`factor` for pretty printing). Counts without building the text, and
 * stops counting at the limit; shared references count each time, as
 * JSON.stringify writes them.
 */
function checkJsonLength(value: unknown, what: string, factor = 1) {
  const budget = MAX_STRING_LENGTH / factor;
  let length = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") length += v.length + 2;
    else if (Array.isArray(v)) {
      length += 1 + v.length;
      for (const item of v) stack.push(item);
    } else if (typeof v === "object" && v !== null) {
      // A jsonata function (a lambda holds its environment, cycles and all) is written as nothing.
      if ("_jsonata_lambda" in v || "_jsonata_function" in v) continue;
      for (const [k, item] of Object.entries(v)) {
        length += k.length + 4;
        stack.push(item);
      }
      length += 2;
    } else length += 5;
    if (length > budget) throw new MemoryLimit(`${what} would be more than ${MAX_STRING_LENGTH} characters of JSON`);
  }
}

function describe(f: JsonataFailure): string {
  const where = typeof f.position === "number" ? ` (${f.code ?? "error"} at position ${f.position}${f.token !== undefined ? `, near "${f.token}"` : ""})` : f.code ? ` (${f.code})` : "";
  return `${f.message ?? "unknown error"}${where}`;
}

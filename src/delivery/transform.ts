import jsonata from "jsonata";
import { AppError } from "../contracts/errors";

/**
 * JSONata transforms (contract §5): the parsed body is the input, `$headers`,
 * `$query` and `$method` are bound, the result is the delivered body.
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
const MAX_SEQUENCE = 1_000_000;
/** How long evaluation may hold the event loop before it lets other work run. */
const YIELD_EVERY_MS = 10;

/** A transform failed at evaluation: the attempt fails with error `transform_error` and is not retried. */
export class TransformError extends Error {
  readonly code = "transform_error" as const;
  constructor(
    message: string,
    /** JSONata's own code, e.g. T1006, D1012 (timeout). */
    readonly jsonataCode: string | undefined,
    readonly position: number | undefined,
    readonly timedOut: boolean,
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
}

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
  compiled.assign(EVALUATE_ENTRY as unknown as string, yieldNowAndThen);
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(key, compiled);
  return compiled;
}

/**
 * Evaluates with a time limit. jsonata awaits between steps only on
 * microtasks, so a long evaluation would hold the whole process (ingest
 * included); the entry hook hands the event loop back every few ms, and the
 * `timeout` guardrail ends a runaway expression with TransformError.
 */
export async function applyTransform(expression: string, input: TransformInput, opts: { timeoutMs: number }): Promise<unknown> {
  let compiled: Compiled;
  try {
    compiled = compileTransform(expression, opts.timeoutMs);
  } catch (e) {
    throw new TransformError(e instanceof Error ? e.message : String(e), undefined, undefined, false);
  }
  try {
    const result: unknown = await compiled.evaluate(input.body, { headers: input.headers, query: input.query, method: input.method });
    // Nothing selected: deliver JSON null rather than an empty body.
    return result === undefined ? null : result;
  } catch (e) {
    const f = e as JsonataFailure;
    if (f instanceof RangeError) throw new TransformError("Transform failed: stack overflow (check for non-terminating recursion)", undefined, undefined, false);
    const timedOut = f.code === "D1012";
    const message = timedOut ? `Transform timed out after ${opts.timeoutMs} ms (check for an infinite loop or runaway recursion)` : `Transform failed: ${describe(f)}`;
    throw new TransformError(message, f.code, f.position, timedOut);
  }
}

const EVALUATE_ENTRY = Symbol.for("jsonata.__evaluate_entry");
/** Shared by all evaluations: what matters is how long the process has been inside jsonata without a break. */
let lastYield = 0;

function yieldNowAndThen(_expr: unknown, _input: unknown, environment: { base?: { timestamp?: Date } } | undefined): Promise<void> | undefined {
  const now = Date.now();
  const started = environment?.base?.timestamp?.getTime() ?? now;
  if (now - Math.max(lastYield, started) < YIELD_EVERY_MS) return undefined;
  lastYield = now;
  return new Promise((resolve) => setImmediate(resolve));
}

function describe(f: JsonataFailure): string {
  const where = typeof f.position === "number" ? ` (${f.code ?? "error"} at position ${f.position}${f.token !== undefined ? `, near "${f.token}"` : ""})` : f.code ? ` (${f.code})` : "";
  return `${f.message ?? "unknown error"}${where}`;
}

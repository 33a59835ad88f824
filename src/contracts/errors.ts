import type { z } from "zod";

/** The error codes of docs/decisions.md D2 with their HTTP statuses. */
export const errorStatus = {
  validation_error: 400,
  unauthorized: 401,
  signature_invalid: 401,
  session_required: 403,
  forbidden: 403,
  ip_denied: 403,
  source_disabled: 403,
  not_found: 404,
  conflict: 409,
  source_expired: 410,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  schema_violation: 422,
  /** A transform stopped by its time or memory limit (docs/delivery.md). */
  transform_limit_exceeded: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/** The one error type: thrown anywhere, turned into the contract's error body in one place. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = errorStatus[code];
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details !== undefined ? { details: this.details } : {}) } };
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);
export const validation = (message: string, details?: unknown) => new AppError("validation_error", message, details);

/** What went wrong, as one line: the message of an Error, anything else as text. */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A field and what is wrong with it: the `details` of a validation_error. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** Zod's issues as field problems, each field's path under `prefix` (e.g. ["body", "config"]). */
export function zodProblems(error: z.ZodError, prefix: readonly string[] = []): FieldProblem[] {
  return error.issues.map((i) => ({
    field: [...prefix, ...i.path.map(String)].filter((part) => part !== undefined && part !== "").join("."),
    message: i.message,
  }));
}

/** A failed zod parse as the one validation_error every edge answers with. */
export const fromZod = (error: z.ZodError, message = "Request validation failed", prefix: readonly string[] = []): AppError =>
  new AppError("validation_error", message, zodProblems(error, prefix));

/** Input that has not been through a route's validation (the CLI's local mode): parsed, or the route's validation_error. */
export function parseOrThrow<T extends z.ZodType>(schema: T, raw: unknown, message = "Request validation failed", prefix: readonly string[] = ["body"]): z.output<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw fromZod(parsed.error, message, prefix);
  return parsed.data;
}

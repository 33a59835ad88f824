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

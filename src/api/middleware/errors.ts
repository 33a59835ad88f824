import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError, type ErrorCode } from "../../contracts/errors";
import { isDatabaseUnreachable, isDataException } from "../../db/errors";
import type { DatabaseHealth } from "../../db/health";
import type { Logger } from "../../observability/logger";

const byStatus: Record<number, ErrorCode> = {
  400: "validation_error",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  408: "request_timeout",
  409: "conflict",
  410: "source_expired",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "schema_violation",
  429: "rate_limited",
  503: "unavailable",
};

/** What a client is told to wait before trying again while the database is away. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Turns anything thrown into the contract's error body; raw exception text never reaches a client. */
export function toAppError(err: unknown, c?: Context): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HTTPException) {
    const code = byStatus[err.status] ?? (err.status < 500 ? "validation_error" : "internal");
    const message =
      err.status === 400 && /json/i.test(err.message)
        ? "Malformed JSON in request body"
        : err.status === 415
          ? unsupportedMediaMessage(c?.req.header("content-type"))
          : code === "internal"
            ? "Internal server error"
            : err.message || code;
    return new AppError(code, message);
  }
  if (err instanceof SyntaxError) return new AppError("validation_error", "Malformed JSON in request body");
  if (isDatabaseUnreachable(err)) return new AppError("unavailable", "The database is unavailable: nothing was stored or changed; try again shortly");
  if (isDataException(err)) return new AppError("validation_error", "A value in the request cannot be stored (text may not contain NUL characters)");
  return new AppError("internal", "Internal server error");
}

function unsupportedMediaMessage(contentType: string | undefined) {
  if (!contentType) return "The request body has no Content-Type: send it as application/json";
  return `A ${contentType.split(";")[0]!.trim().slice(0, 100)} body cannot be read here: send application/json`;
}

export function errorHandler(logger: Logger, health?: DatabaseHealth) {
  return (err: unknown, c: Context) => {
    const appError = toAppError(err, c);
    // Logged once when the database goes away and once when it is back (src/db/health.ts), not per request.
    if (appError.code === "unavailable") {
      health?.failed(err);
      c.header("retry-after", String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    }
    if (appError.code === "internal") {
      logger.error("unhandled error", { path: c.req.path, method: c.req.method, error: err instanceof Error ? (err.stack ?? err.message) : String(err), request_id: c.get("requestId") });
    }
    // The rest of a stalled body is never read: the connection cannot carry another request.
    if (appError.code === "request_timeout") c.header("connection", "close");
    return c.json(appError.toBody(), appError.status as 400);
  };
}

/** No resource's id or slug holds a NUL character (PostgreSQL's text cannot): such a path names nothing. */
export const nulInPath = async (c: Context, next: () => Promise<void>) => {
  if (c.req.path.includes("\u0000") || /%00/i.test(c.req.path)) throw new AppError("not_found", "Not found: the path holds a NUL character");
  await next();
};

export const notFoundHandler = (c: Context) => c.json(new AppError("not_found", `No route for ${c.req.method} ${c.req.path}`).toBody(), 404);

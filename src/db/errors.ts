/** Whether a failed statement broke a UNIQUE constraint, on either store (drizzle may wrap the driver's error as its cause). */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof Error && /UNIQUE constraint failed/i.test(e.message)) return true;
    // PostgreSQL's SQLSTATE unique_violation; Bun.SQL puts it in errno.
    if ((e as { errno?: unknown }).errno === "23505") return true;
  }
  return false;
}

/**
 * Whether the database refused a value itself (SQLSTATE class 22, "data
 * exception"): PostgreSQL's text cannot hold a NUL character, for one. The
 * request's fault, answered as a 400, not a 500.
 */
export function isDataException(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const state = (e as { errno?: unknown }).errno;
    if (typeof state === "string" && state.startsWith("22")) return true;
  }
  return false;
}

/**
 * Failures that mean the database cannot be reached right now, not that the
 * statement is wrong: the connection was refused, closed or timed out, the
 * server is shutting down or starting up (SQLSTATE 57P01, 57P02, 57P03), a
 * connection exception (class 08), or too many clients (53300). Answered 503
 * `unavailable` with Retry-After (docs/api.md); `serve` waits through them at
 * start-up (docs/postgres.md).
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    const state = (e as { errno?: unknown }).errno;
    if (typeof state === "string" && (UNREACHABLE_STATES.has(state) || state.startsWith("08"))) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && UNREACHABLE_CODES.test(code)) return true;
  }
  return false;
}

const UNREACHABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300"]);
// Bun.SQL's client-side codes (checked against Bun 1.4) and the socket errors under them.
const UNREACHABLE_CODES = /^(ERR_POSTGRES_CONNECTION_(CLOSED|REFUSED|TIMEOUT|FAILED)|ERR_POSTGRES_(IDLE|LIFETIME)_TIMEOUT|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/;

/** One line saying why the database is unreachable (the driver's words, never the statement's text). */
export function unreachableReason(err: unknown): string {
  type Driverish = { message?: unknown; code?: unknown; errno?: unknown };
  let last: Driverish | null = null;
  for (let e: unknown = err, depth = 0; e && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    const x = e as { code?: unknown; errno?: unknown };
    if (typeof x.code === "string" || typeof x.errno === "string") last = e as Driverish;
  }
  if (!last) return err instanceof Error ? err.message.split("\n")[0]!.slice(0, 200) : String(err).slice(0, 200);
  const message = String(last.message ?? "").split("\n")[0]!.slice(0, 200);
  const tag = typeof last.errno === "string" ? `SQLSTATE ${last.errno}` : String(last.code);
  return `${message} (${tag})`;
}

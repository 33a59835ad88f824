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

/** Whether a failed statement broke a UNIQUE constraint, on either store (drizzle may wrap the driver's error as its cause). */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof Error && /UNIQUE constraint failed/i.test(e.message)) return true;
    // PostgreSQL's SQLSTATE unique_violation; Bun.SQL puts it in errno.
    if ((e as { errno?: unknown }).errno === "23505") return true;
  }
  return false;
}

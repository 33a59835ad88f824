/** Status badges: green, amber or red by what a status means. */

const good = new Set(["active", "success", "delivered", "verified", "unique", "completed", "enabled", "resolved", "ok"]);
const bad = new Set(["failed", "disabled", "rejected", "revoked", "error", "dlq", "open"]);
const warn = new Set(["paused", "held", "pending", "queued", "delivering", "running", "duplicate", "acknowledged", "retrying"]);

export function StatusBadge({ status }: { status: string | null | undefined }) {
  if (!status) return <span className="badge">–</span>;
  const cls = good.has(status) ? "ok" : bad.has(status) ? "bad" : warn.has(status) ? "warn" : "";
  return <span className={`badge ${cls}`}>{status}</span>;
}

/** Marks an attempt an operator forced through for a rejected event. */
export function ForcedBadge() {
  return (
    <span className="badge bad" title="An operator delivered this rejected event anyway (force)">
      forced
    </span>
  );
}

import { StatusBadge } from "./badges";

/** A job's progress (replay, redrive, bulk retry) as a bar with counts. */
export function JobBar({ job }: { job: { status: string; total: number; processed: number; succeeded: number; failed: number; skipped?: number } }) {
  const pctDone = job.total > 0 ? Math.round((job.processed / job.total) * 100) : job.status === "completed" ? 100 : 0;
  return (
    <div>
      <div className={`progress ${job.status === "completed" ? "done" : ""}`} role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pctDone} aria-label="Progress">
        <div style={{ width: `${pctDone}%` }} />
      </div>
      <div className="muted" style={{ marginTop: 6, fontSize: 13 }}>
        <StatusBadge status={job.status} /> {job.processed.toLocaleString()} of {job.total.toLocaleString()} processed · {job.succeeded.toLocaleString()} succeeded · {job.failed.toLocaleString()} failed
        {job.skipped ? ` · ${job.skipped.toLocaleString()} skipped` : ""}
      </div>
    </div>
  );
}

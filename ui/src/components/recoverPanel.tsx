import { useRef, useState, type FormEvent } from "react";
import { api } from "../api";
import { Can } from "../can";
import { fromLocalInput, plural, toLocalInput } from "../format";
import { useSubmit } from "../hooks";
import { useJob } from "../jobs";
import { Field, FormActions } from "./forms";
import { JobBar } from "./jobBar";
import { ErrorAlert, Loading } from "./layout";
import { toast } from "./toasts";

/**
 * Recovery by time (docs/delivery.md, "Recovering an outage") on a
 * destination's or an endpoint's page: a Recover button opens a since/until
 * form; the job's progress shows below it, as a redrive's does.
 * `path` is the resource's API path; `/recover` is added to it.
 */
export function RecoverPanel({ path, what }: { path: string; what: "event" | "message" }) {
  const now = useRef(new Date());
  const [open, setOpen] = useState(false);
  const [since, setSince] = useState(toLocalInput(new Date(now.current.getTime() - 3600_000)));
  const [until, setUntil] = useState("");
  const [jobId, setJobId] = useState<string | null>(null);
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const { job, error: jobError } = useJob(jobId ? `/jobs/${jobId}` : null);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const sinceIso = fromLocalInput(since);
    const untilIso = fromLocalInput(until);
    if (!sinceIso) return setFieldErrors({ since: "Pick the start of the outage" });
    const r = await submit(() => api.post<{ job_id: string; total: number }>(`${path}/recover`, { since: sinceIso, ...(untilIso ? { until: untilIso } : {}) }), ["since", "until"]);
    if (!r) return;
    setJobId(r.job_id);
    setOpen(false);
    toast(`Sending ${plural(r.total, what)} again`);
  };

  return (
    <section className="panel" aria-label="Recover">
      <h2>Recover an outage</h2>
      <p className="muted">
        Every {what} whose last attempt here failed within a time range (it ran out of retries, or is in the dead-letter queue) is sent again, once, oldest first. Deliveries that succeeded or are still retrying are left alone.
      </p>
      {open ? (
        <form className="form" onSubmit={onSubmit} aria-label="Recover a time range" noValidate>
          <ErrorAlert error={formError} />
          <div className="form-grid">
            <Field label="Since" error={fieldErrors.since}>
              {(p) => <input {...p} type="datetime-local" value={since} onChange={(e) => setSince(e.target.value)} />}
            </Field>
            <Field label="Until" error={fieldErrors.until} help="Empty: now">
              {(p) => <input {...p} type="datetime-local" value={until} onChange={(e) => setUntil(e.target.value)} />}
            </Field>
          </div>
          <FormActions busy={busy} label="Start recovery" busyLabel="Starting…" onCancel={() => setOpen(false)} />
        </form>
      ) : (
        <Can permission="write">
          <button type="button" className="btn" onClick={() => setOpen(true)}>
            Recover…
          </button>
        </Can>
      )}
      {jobId ? <div style={{ marginTop: 12 }}>{job ? <JobBar job={job} /> : <Loading what="Starting" />}</div> : null}
      <ErrorAlert error={jobError} />
    </section>
  );
}

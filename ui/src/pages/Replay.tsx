import { useRef, useState, type FormEvent } from "react";
import { api } from "../api";
import { Field, FormActions, NamedOptions } from "../components/forms";
import { JobBar } from "../components/jobBar";
import { Empty, ErrorAlert, Loading, PageHead } from "../components/layout";
import { fromLocalInput, fullTime, toLocalInput } from "../format";
import { useLoad, useSubmit } from "../hooks";
import { useJob } from "../jobs";
import { Link, useLocation } from "../router";
import type { Connection, Destination, Source } from "../types";
import { WriteForm } from "../components/writeForm";
import { Can } from "../can";

interface StartedReplay {
  job_id: string;
  destination: string;
  source: string | null;
  from: string;
  to: string;
  started: number;
}

const STORE = "hookrelay.replays";
/** The server keeps job progress 24 hours; forget ours a little earlier. */
const KEEP_MS = 23 * 3600 * 1000;

function loadStarted(): StartedReplay[] {
  try {
    const all = JSON.parse(localStorage.getItem(STORE) ?? "[]") as StartedReplay[];
    return all.filter((r) => Date.now() - r.started < KEEP_MS);
  } catch {
    return [];
  }
}

export function ReplayPage() {
  // From a connection's page (?connection_id=…): replay through it, its source, filter and transform.
  const connectionId = useLocation().search.get("connection_id") ?? "";
  const via = useLoad(() => (connectionId ? api.get<{ connection: Connection }>(`/connections/${connectionId}`) : Promise.resolve(null)), [connectionId]);
  const connection = via.data?.connection ?? null;
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  const sources = useLoad(() => api.get<{ sources: Source[] }>("/sources"), []);
  const [started, setStarted] = useState<StartedReplay[]>(loadStarted);
  const now = useRef(new Date());
  const [destinationId, setDestinationId] = useState("");
  const [sourceId, setSourceId] = useState("");
  const [from, setFrom] = useState(toLocalInput(new Date(now.current.getTime() - 24 * 3600 * 1000)));
  const [to, setTo] = useState(toLocalInput(new Date(now.current.getTime() + 60_000)));
  const [rate, setRate] = useState("10");
  const [max, setMax] = useState("1000");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const destList = dests.data?.destinations ?? [];
  const chosenDest = connection?.destination_id ?? (destinationId || destList[0]?.id || "");

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    const fromIso = fromLocalInput(from);
    const toIso = fromLocalInput(to);
    if (!chosenDest) errors.destination_id = "Pick the destination to re-deliver to";
    if (!fromIso) errors.from = "Pick the start of the time range";
    if (!toIso) errors.to = "Pick the end of the time range";
    if (fromIso && toIso && fromIso > toIso) errors.from = "must not be after the end";
    if (Object.keys(errors).length > 0) return setFieldErrors(errors);
    const body = {
      destination_id: chosenDest,
      from: fromIso,
      to: toIso,
      ...(connection ? { connection_id: connection.id } : sourceId ? { source_id: sourceId } : {}),
      rate_limit: Number(rate),
      max_events: Number(max),
    };
    const r = await submit(() => api.post<{ job_id: string; total: number }>("/replay", body), ["destination_id", "from", "to", "source_id", "rate_limit", "max_events"]);
    if (!r) return;
    const entry: StartedReplay = {
      job_id: r.job_id,
      destination: destList.find((d) => d.id === chosenDest)?.name ?? chosenDest,
      source: connection ? `${connection.source_name ?? connection.source_id} through ${connection.name}` : (sources.data?.sources.find((s) => s.id === sourceId)?.name ?? null),
      from: fromIso!,
      to: toIso!,
      started: Date.now(),
    };
    const next = [entry, ...started].slice(0, 10);
    setStarted(next);
    localStorage.setItem(STORE, JSON.stringify(next));
  };

  return (
    <>
      <PageHead title="Replay" sub="Re-deliver the events received in a time range to one destination, oldest first, at a set pace. Failures are recorded, not retried." />
      {dests.loading && !dests.data ? (
        <Loading />
      ) : destList.length === 0 ? (
        <div className="panel">
          <Empty title="No destination to replay to" action={<Can permission="write"><Link to="/destinations/new" className="btn primary">Create a destination</Link></Can>}>
            A replay sends stored events to a destination again.
          </Empty>
        </div>
      ) : (
        <WriteForm className="panel form" onSubmit={onSubmit} aria-label="Start a replay" noValidate>
          <h2>Start a replay</h2>
          <ErrorAlert error={formError ?? via.error ?? dests.error ?? sources.error} />
          {connection ? (
            <p role="note" aria-label="Replay through a connection">
              Through connection <Link to={`/connections/${connection.id}`}>{connection.name}</Link>: only events from {connection.source_name ?? "its source"} that pass
              its filter, shaped by its transform, to {connection.destination_name ?? "its destination"}. <Link to="/replay">Replay without it</Link>
            </p>
          ) : null}
          <div className="form-grid">
            {connection ? null : (
              <>
                <Field label="Destination" error={fieldErrors.destination_id}>
                  {(p) => (
                    <select {...p} value={chosenDest} onChange={(e) => setDestinationId(e.target.value)}>
                      <NamedOptions items={destList} />
                    </select>
                  )}
                </Field>
                <Field label="Only events from" error={fieldErrors.source_id}>
                  {(p) => (
                    <select {...p} value={sourceId} onChange={(e) => setSourceId(e.target.value)}>
                      <option value="">Every source</option>
                      <NamedOptions items={sources.data?.sources} />
                    </select>
                  )}
                </Field>
              </>
            )}
            <Field label="From" error={fieldErrors.from}>
              {(p) => <input {...p} type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} />}
            </Field>
            <Field label="To" error={fieldErrors.to}>
              {(p) => <input {...p} type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} />}
            </Field>
            <Field label="Events per second" error={fieldErrors.rate_limit} help="1 to 100">
              {(p) => <input {...p} type="number" min={1} max={100} value={rate} onChange={(e) => setRate(e.target.value)} />}
            </Field>
            <Field label="At most" error={fieldErrors.max_events} help="events, 1 to 10,000">
              {(p) => <input {...p} type="number" min={1} max={10000} value={max} onChange={(e) => setMax(e.target.value)} />}
            </Field>
          </div>
          <FormActions busy={busy} label="Start replay" busyLabel="Starting…" />
        </WriteForm>
      )}

      {started.length > 0 ? (
        <section className="panel" aria-label="Replays">
          <h2>Replays</h2>
          <div style={{ display: "grid", gap: 16 }}>
            {started.map((r) => (
              <ReplayProgress key={r.job_id} replay={r} />
            ))}
          </div>
        </section>
      ) : null}
    </>
  );
}

function ReplayProgress({ replay }: { replay: StartedReplay }) {
  const { job, error } = useJob(`/replay/${replay.job_id}`);
  return (
    <div data-job-id={replay.job_id} aria-label={`Replay to ${replay.destination}`} role="group">
      <div style={{ marginBottom: 6 }}>
        <strong>{replay.destination}</strong>
        <span className="muted">
          {" "}
          · {replay.source ?? "every source"} · {fullTime(replay.from)} → {fullTime(replay.to)}
        </span>
      </div>
      <ErrorAlert error={error} />
      {job ? <JobBar job={job} /> : error ? null : <Loading what="Loading progress" />}
    </div>
  );
}

/** One source: its ingest URL and counts, pausing, disabling or deleting it. */
import { useState } from "react";
import { api } from "../../api";
import { StatusBadge } from "../../components/badges";
import { CopyField } from "../../components/copy";
import { DetailActions } from "../../components/detailActions";
import { ConfirmDialog } from "../../components/dialogs";
import { ErrorAlert, PageHead, PageLoading } from "../../components/layout";
import { Time } from "../../components/time";
import { toast } from "../../components/toasts";
import { num, plural } from "../../format";
import { useAction, useLoad } from "../../hooks";
import { Link, navigate, useLocation } from "../../router";
import type { Source } from "../../types";
import { SourceSettings } from "./settings";

export function SourceDetailPage({ id }: { id: string }) {
  const { search } = useLocation();
  const source = useLoad(() => api.get<{ source: Source }>(`/sources/${encodeURIComponent(id)}`), [id]);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const { busy, error: actionError, run } = useAction();
  const s = source.data?.source;

  const setStatus = (status: string) =>
    run(async () => {
      const res = await api.patch<{ source: Source }>(`/sources/${encodeURIComponent(id)}`, { status });
      source.setData(() => res);
      toast(`Source ${status === "active" ? "resumed" : status}`);
    });

  const remove = () =>
    run(async () => {
      await api.del(`/sources/${encodeURIComponent(id)}`);
      toast(`Source “${s?.name}” deleted`);
      navigate("/sources");
    });

  if (!s) return <PageLoading title="Source" sub={<Link to="/sources">← All sources</Link>} error={source.error} onRetry={source.reload} />;

  return (
    <>
      <PageHead
        title={
          <>
            {s.name} <StatusBadge status={s.status} />
          </>
        }
        sub={<Link to="/sources">← All sources</Link>}
        actions={
          <DetailActions
            moves={[
              s.status === "active" ? { label: "Pause", to: "paused" } : { label: s.status === "paused" ? "Resume" : "Enable", to: "active" },
              ...(s.status !== "disabled" ? [{ label: "Disable", to: "disabled" }] : []),
            ]}
            busy={busy}
            onMove={setStatus}
            onDelete={() => setConfirmDelete(true)}
          />
        }
      />
      <ErrorAlert error={actionError} />
      {search.get("created") ? (
        <div className="alert ok" role="status">
          Source created. Paste its ingest URL into the provider's webhook settings; events will show up on the <Link to={`/events?source_id=${s.id}`}>Events page</Link> as they arrive.
        </div>
      ) : null}
      {s.status === "paused" ? <div className="alert warn">Paused: requests are stored but held; they are delivered when you resume.</div> : null}
      {s.status === "disabled" ? <div className="alert warn">Disabled: the ingest URL answers 403 and stores nothing.</div> : null}

      <section className="panel" aria-label="Ingest URL">
        <h2>Ingest URL</h2>
        <CopyField value={s.ingest_url} label="Ingest URL" />
        <dl className="kv" style={{ marginTop: 14 }}>
          <dt>Events</dt>
          <dd>
            {num(s.event_count)} · <Link to={`/events?source_id=${s.id}`}>view events</Link>
          </dd>
          <dt>Requests</dt>
          <dd>{num(s.request_count)}</dd>
          <dt>Last event</dt>
          <dd>
            <Time iso={s.last_event_at} />
          </dd>
          <dt>Template</dt>
          <dd>{s.template ?? "none"}</dd>
          <dt>Id</dt>
          <dd className="mono">{s.id}</dd>
        </dl>
      </section>

      <SourceSettings key={s.updated_at} source={s} onSaved={(updated) => source.setData(() => ({ source: updated }))} />

      <ConfirmDialog open={confirmDelete} title="Delete this source?" confirmLabel="Delete source" busy={busy} error={actionError} onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
        <p>
          <strong>{s.name}</strong> is deleted with its {plural(s.event_count, "stored event")} and their delivery history; deliveries still queued or waiting for a retry are never sent. Its connections are removed, and its
          ingest URL stops working: providers still sending to it get errors. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** One record of a collection: its current data and its changelog as a timeline of diffs. */
import { useState } from "react";
import { api } from "../api";
import { Empty, ErrorAlert, Loading, PageHead, PageLoading } from "../components/layout";
import { Time } from "../components/time";
import { plural, prettyJson, shortId } from "../format";
import { useLoad } from "../hooks";
import { jsonDiff, parseData, shortJson, type JsonChange } from "../json";
import { Link } from "../router";
import type { ChangelogEntry, Collection, CollectionRecord } from "../types";

const FIRST = 50;
const MOST = 100;

export function RecordPage({ collectionId, recordKey }: { collectionId: string; recordKey: string }) {
  const base = `/collections/${encodeURIComponent(collectionId)}`;
  const keyPath = `${base}/records/${encodeURIComponent(recordKey)}`;
  const [limit, setLimit] = useState(FIRST);
  const collection = useLoad(() => api.get<{ collection: Collection }>(base), [collectionId]);
  const changelog = useLoad(() => api.get<{ changelog: ChangelogEntry[] }>(`${keyPath}/changelog`, { limit }), [keyPath, limit]);
  const entries = changelog.data?.changelog;
  // The newest entry says whether the record still exists: a deleted one is not asked for (it would be a 404).
  const exists = entries ? entries[0]?.change_type !== "deleted" : undefined;
  const record = useLoad(() => (exists ? api.get<{ record: CollectionRecord }>(keyPath) : Promise.resolve(null)), [keyPath, exists, entries?.[0]?.id]);
  const r = record.data?.record;
  const c = collection.data?.collection;
  const sub = <Link to={`/collections/${collectionId}`}>← {c?.name ?? "Collection"}</Link>;
  const title = (
    <>
      Record{" "}
      <span className="mono" style={{ fontSize: "0.85em" }}>
        {recordKey}
      </span>
    </>
  );

  if (!entries) return <PageLoading title={title} sub={sub} error={changelog.error} onRetry={changelog.reload} />;

  return (
    <>
      <PageHead title={title} sub={sub} actions={exists === false ? <span className="badge bad">deleted</span> : undefined} />
      <ErrorAlert error={record.error ?? collection.error} onRetry={record.error ? record.reload : collection.reload} />
      {exists === false ? (
        <div className="alert warn" role="status">
          This record was deleted by a <code>{entries[0]!.event_type ?? "delete"}</code> event <Time iso={entries[0]!.created_at} />. Its history stays below.
        </div>
      ) : (
        <section className="panel" aria-label="Current data">
          <h2>Current data</h2>
          {r ? (
            <>
              <pre className="code" data-testid="record-data">
                {prettyJson(r.data).text}
              </pre>
              <dl className="kv" style={{ marginTop: 14 }}>
                <dt>Last written by</dt>
                <dd>
                  {r.event_type ? <code>{r.event_type}</code> : null} event{" "}
                  <Link to={`/events/${r.source_event_id}`} className="mono">
                    {r.source_event_id}
                  </Link>{" "}
                  (received <Time iso={r.source_event_at} />)
                </dd>
                <dt>Created</dt>
                <dd>
                  <Time iso={r.created_at} />
                </dd>
                <dt>Updated</dt>
                <dd>
                  <Time iso={r.updated_at} />
                </dd>
              </dl>
            </>
          ) : record.error ? null : (
            <Loading what="Loading the record" />
          )}
        </section>
      )}

      <section className="panel" aria-label="Changelog">
        <div className="panel-head">
          <h2>Changelog</h2>
          <span className="muted">{entries.length >= limit ? `newest ${entries.length}` : plural(entries.length, "change")}, newest first</span>
        </div>
        {entries.length === 0 ? (
          <Empty title="No changes" />
        ) : (
          <ol className="timeline">
            {entries.map((e) => (
              <li key={e.id} className={e.change_type} aria-label={`${e.change_type} ${new Date(e.created_at).toLocaleString()}`}>
                <div className="tl-head">
                  <span className={`badge ${e.change_type === "created" ? "ok" : e.change_type === "deleted" ? "bad" : "info"}`}>{e.change_type}</span>
                  {e.event_type ? <code>{e.event_type}</code> : null}
                  <Time iso={e.created_at} />
                  <span className="muted">
                    · event{" "}
                    <Link to={`/events/${e.event_id}`} className="mono" title={e.event_id}>
                      {shortId(e.event_id)}
                    </Link>
                  </span>
                </div>
                <EntryBody entry={e} />
              </li>
            ))}
          </ol>
        )}
        {entries.length >= limit && limit < MOST ? (
          <button type="button" className="btn small" onClick={() => setLimit(MOST)}>
            Show up to {MOST} changes
          </button>
        ) : null}
      </section>
    </>
  );
}

/** What one entry changed: the first data, the last data, or the paths that differ. */
function EntryBody({ entry }: { entry: ChangelogEntry }) {
  if (entry.change_type === "created") {
    return (
      <>
        <div className="muted tl-note">Created with:</div>
        <pre className="code">{prettyJson(entry.after_data).text}</pre>
      </>
    );
  }
  if (entry.change_type === "deleted") {
    return entry.before_data === null ? null : (
      <>
        <div className="muted tl-note">Removed; its last data was:</div>
        <pre className="code">{prettyJson(entry.before_data).text}</pre>
      </>
    );
  }
  return <Diff changes={jsonDiff(parseData(entry.before_data), parseData(entry.after_data))} />;
}

const SHOWN = 40;
const MARK = { added: "+", removed: "−", changed: "~" } as const;

function Diff({ changes }: { changes: JsonChange[] }) {
  const [all, setAll] = useState(false);
  if (changes.length === 0) return <div className="muted tl-note">No difference in the data.</div>;
  const counts = (["changed", "added", "removed"] as const).map((k) => [k, changes.filter((c) => c.kind === k).length] as const).filter(([, n]) => n > 0);
  const shown = all ? changes : changes.slice(0, SHOWN);
  return (
    <>
      <div className="muted tl-note">{counts.map(([k, n]) => `${n} ${k}`).join(", ")}:</div>
      <div className="diff" role="table" aria-label="Changes">
        {shown.map((c) => (
          <div className={`diff-row ${c.kind}`} role="row" key={`${c.kind}:${c.path}`}>
            <span className="mark" role="cell" aria-label={c.kind}>
              {MARK[c.kind]}
            </span>
            <span className="path" role="cell">
              {c.path || "(the whole data)"}
            </span>
            <span className="values" role="cell">
              {c.kind !== "added" ? <del title={JSON.stringify(c.before)}>{shortJson(c.before)}</del> : null}
              {c.kind === "changed" ? <span aria-hidden="true"> → </span> : null}
              {c.kind !== "removed" ? <ins title={JSON.stringify(c.after)}>{shortJson(c.after)}</ins> : null}
            </span>
          </div>
        ))}
      </div>
      {changes.length > shown.length ? (
        <button type="button" className="btn small" style={{ marginTop: 6 }} onClick={() => setAll(true)}>
          Show all {changes.length} changes
        </button>
      ) : null}
    </>
  );
}

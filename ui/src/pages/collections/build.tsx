/** A collection's build: the badge for its state, and the panel with its backfill progress and counters. */
import { Time } from "../../components/time";
import { num, pct, plural } from "../../format";
import { Link } from "../../router";
import type { Collection, Source } from "../../types";

export function BuildBadge({ c }: { c: Collection }) {
  if (c.build_status === "backfilling") return <span className="badge warn">backfilling {pct(backfillPct(c))}</span>;
  return <span className="badge ok">{c.events_pending > 0 ? `live, ${num(c.events_pending)} waiting` : "live"}</span>;
}

const backfillPct = (c: Collection) => (c.backfill_total > 0 ? (c.backfill_processed / c.backfill_total) * 100 : 100);

function Counter({ label, value, hint, bad }: { label: string; value: number; hint?: string; bad?: boolean }) {
  return (
    <div className="card" role="group" aria-label={label}>
      <div className="label">{label}</div>
      <div className="value" style={bad && value > 0 ? { color: "var(--danger)" } : undefined}>
        {num(value)}
      </div>
      {hint ? <div className="hint">{hint}</div> : null}
    </div>
  );
}

/** The builder's state: backfill progress, what it handled, and what it could not build (counted, never dropped silently). */
export function BuildPanel({ c }: { c: Collection }) {
  const done = Math.round(backfillPct(c));
  return (
    <section className="panel" aria-label="Build">
      <div className="panel-head">
        <h2>Build</h2>
        <BuildBadge c={c} />
      </div>
      {c.build_status === "backfilling" ? (
        <div style={{ marginBottom: 14 }}>
          <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={done} aria-label="Backfill progress">
            <div style={{ width: `${done}%` }} />
          </div>
          <div className="muted" style={{ marginTop: 6, fontSize: 13 }}>
            Backfilling from the events stored before the collection was created: {num(c.backfill_processed)} of {num(c.backfill_total)} handled.
          </div>
        </div>
      ) : (
        <p className="muted" style={{ marginTop: 0 }}>
          {c.backfill_total > 0 ? (
            <>
              Backfilled from {plural(c.backfill_total, "stored event")}, done <Time iso={c.backfill_completed_at} />.{" "}
            </>
          ) : null}
          Live: new events of {c.source_name ?? "the source"} are built as they arrive.
        </p>
      )}
      <div className="cards" style={{ marginBottom: 0 }}>
        <Counter label="Records" value={c.record_count} />
        <Counter label="Events handled" value={c.events_processed} hint="all of the below included" />
        <Counter label="Waiting" value={c.events_pending} hint="stored, not built yet" />
        <Counter label="Ignored" value={c.events_ignored} hint="other event types" />
        <Counter label="Missing key" value={c.events_missing_key} hint={`no string or number at ${c.key_path}`} bad />
        <Counter label="Transform failed" value={c.events_transform_failed} hint="failed or returned nothing" bad />
      </div>
      {c.last_error ? (
        <div className="alert warn" role="status" style={{ marginTop: 14, marginBottom: 0 }} data-testid="last-error">
          <strong>Last event not built:</strong> {c.last_error}
          {c.last_error_event_id ? (
            <>
              {" "}
              · event{" "}
              <Link to={`/events/${c.last_error_event_id}`} className="mono">
                {c.last_error_event_id}
              </Link>
            </>
          ) : null}{" "}
          · <Time iso={c.last_error_at} />
        </div>
      ) : null}
      <dl className="kv" style={{ marginTop: 14 }}>
        <dt>Last event handled</dt>
        <dd>
          {c.position_event_id ? (
            <>
              <Link to={`/events/${c.position_event_id}`} className="mono">
                {c.position_event_id}
              </Link>{" "}
              (received <Time iso={c.position_at} />)
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </dd>
        <dt>Source</dt>
        <dd>
          <Link to={`/sources/${c.source_id}`}>{c.source_name ?? c.source_id}</Link> · <Link to={`/events?source_id=${c.source_id}`}>its events</Link>
        </dd>
      </dl>
    </section>
  );
}

import { useEffect, useRef, useState } from "react";
import { api } from "../api";
import { DataTable, Empty, ErrorAlert, Loading, PageHead } from "../components";
import { ms, num, pct } from "../format";
import { useInterval, useLoad } from "../hooks";
import { useDebounced, useEventStream } from "../live";
import { Link } from "../router";
import type { Connection, DeliveryAttempt, Destination, Pagination, Source } from "../types";

const HOUR = 3600 * 1000;

interface Bucket {
  start: number;
  received: number;
  delivered: number;
}

interface Stats {
  buckets: Bucket[];
  received: number;
  delivered: number;
  failed: number;
  dlq: number;
  queued: number;
  openIssues: number | null;
  slowest: { id: string; name: string; avg: number; max: number; count: number }[];
  sources: number;
  destinations: number;
  connections: number;
}

/** Runs the tasks with at most `n` in flight (a dashboard makes many small count queries). */
async function pool<T>(tasks: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

const total = (path: string, query: Record<string, string>) => async () => (await api.get<{ pagination: Pagination }>(path, { ...query, limit: 1 })).pagination.total;

let issuesRoute: Promise<boolean> | null = null;
/** The issues API arrives in a later version: ask the OpenAPI document instead of provoking a 404. */
function hasIssuesRoute() {
  issuesRoute ??= api
    .get<{ paths?: Record<string, unknown> }>("/openapi.json")
    .then((doc) => Object.keys(doc.paths ?? {}).some((p) => p === "/issues" || p === "/v1/issues"))
    .catch(() => false);
  return issuesRoute;
}

async function loadStats(): Promise<Stats> {
  const end = Math.ceil(Date.now() / HOUR) * HOUR;
  const starts = Array.from({ length: 24 }, (_, i) => end - (24 - i) * HOUR);
  const iso = (t: number) => new Date(t).toISOString();
  const since = iso(starts[0]!);

  const [counts, [failed, dlq, queued, delivering], attempts, sources, dests, conns, openIssues] = await Promise.all([
    pool(
      starts.flatMap((s) => [total("/events", { after: iso(s), before: iso(s + HOUR) }), total("/events", { after: iso(s), before: iso(s + HOUR), status: "delivered" })]),
      6,
    ),
    Promise.all([
      total("/events", { after: since, status: "failed" })(),
      total("/delivery-attempts", { is_dlq: "1" })(),
      total("/delivery-attempts", { status: "queued" })(),
      total("/delivery-attempts", { status: "delivering" })(),
    ]),
    api.get<{ delivery_attempts: DeliveryAttempt[] }>("/delivery-attempts", { limit: 100 }),
    api.get<{ sources: Source[] }>("/sources"),
    api.get<{ destinations: Destination[] }>("/destinations"),
    api.get<{ connections: Connection[] }>("/connections"),
    hasIssuesRoute().then(async (has) => (has ? (await api.get<{ issues: unknown[] }>("/issues", { status: "open" })).issues.length : null)),
  ]);

  const buckets = starts.map((start, i) => ({ start, received: counts[2 * i]!, delivered: counts[2 * i + 1]! }));
  const byDest = new Map<string, { id: string; name: string; sum: number; max: number; count: number }>();
  for (const a of attempts.delivery_attempts) {
    if (a.duration_ms === null) continue;
    const d = byDest.get(a.destination_id) ?? { id: a.destination_id, name: a.destination_name ?? a.destination_id, sum: 0, max: 0, count: 0 };
    d.sum += a.duration_ms;
    d.max = Math.max(d.max, a.duration_ms);
    d.count++;
    byDest.set(a.destination_id, d);
  }
  const slowest = [...byDest.values()]
    .map((d) => ({ id: d.id, name: d.name, avg: d.sum / d.count, max: d.max, count: d.count }))
    .sort((a, b) => b.avg - a.avg)
    .slice(0, 5);

  return {
    buckets,
    received: buckets.reduce((n, b) => n + b.received, 0),
    delivered: buckets.reduce((n, b) => n + b.delivered, 0),
    failed,
    dlq,
    queued: queued + delivering,
    openIssues,
    slowest,
    sources: sources.sources.length,
    destinations: dests.destinations.length,
    connections: conns.connections.length,
  };
}

export function DashboardPage() {
  const stats = useLoad(loadStats, []);
  useInterval(() => void stats.reload(), 30_000);
  // Traffic redraws the dashboard, at most every few seconds.
  const refresh = useDebounced(() => void stats.reload(), 3000);
  useEventStream({ created: refresh, updated: refresh });
  const s = stats.data;

  if (!s) {
    return (
      <>
        <PageHead title="Dashboard" />
        {stats.error ? <ErrorAlert error={stats.error} onRetry={stats.reload} /> : <Loading what="Loading the last 24 hours" />}
      </>
    );
  }

  const finished = s.delivered + s.failed;
  const setupDone = s.sources > 0 && s.destinations > 0 && s.connections > 0;

  return (
    <>
      <PageHead title="Dashboard" sub="The last 24 hours, updated as events arrive." />
      <ErrorAlert error={stats.error} />
      {!setupDone ? <GettingStarted s={s} /> : null}
      <div className="cards">
        <Card label="Events received" value={num(s.received)} hint="last 24 h" to="/events" />
        <Card label="Delivered" value={num(s.delivered)} hint="last 24 h" to="/events?status=delivered" />
        <Card label="Success rate" value={finished > 0 ? pct((s.delivered / finished) * 100) : "–"} hint={finished > 0 ? `${num(s.failed)} failed` : "nothing delivered yet"} />
        <Card label="Open issues" value={s.openIssues === null ? "–" : num(s.openIssues)} hint={s.openIssues === null ? "issues arrive in a later version" : "failure groups"} />
        <Card label="Dead-letter queue" value={num(s.dlq)} hint="deliveries out of retries" to="/attempts?is_dlq=1" />
        <Card label="Queue depth" value={num(s.queued)} hint="queued or in flight" to="/attempts?status=queued" />
      </div>
      <section className="panel chart" aria-label="Events over 24 hours">
        <div className="panel-head">
          <h2>Events per hour</h2>
          <div className="legend">
            <span style={{ ["--c" as string]: "var(--chart-received)" }}>received</span>
            <span style={{ ["--c" as string]: "var(--chart-delivered)" }}>delivered</span>
          </div>
        </div>
        <BarChart buckets={s.buckets} />
      </section>
      <section className="panel flush" aria-label="Slowest destinations">
        <div className="panel-head" style={{ padding: "14px 16px 0" }}>
          <h2>Slowest destinations</h2>
          <span className="muted" style={{ fontSize: 12 }}>
            over the latest 100 attempts
          </span>
        </div>
        {s.slowest.length === 0 ? (
          <Empty title="No deliveries yet">Response times show up here once events are delivered.</Empty>
        ) : (
          <DataTable
            label="Slowest destinations"
            rows={s.slowest}
            rowKey={(d) => d.id}
            columns={[
              { label: "Destination", render: (d) => <Link to={`/destinations/${d.id}`}>{d.name}</Link> },
              { label: "Average", className: "num", render: (d) => ms(d.avg) },
              { label: "Slowest", className: "num", render: (d) => ms(d.max) },
              { label: "Attempts", className: "num", render: (d) => num(d.count) },
            ]}
          />
        )}
      </section>
    </>
  );
}

function Card({ label, value, hint, to }: { label: string; value: string; hint: string; to?: string }) {
  const inner = (
    <>
      <div className="label">{label}</div>
      <div className="value">{value}</div>
      <div className="hint">{hint}</div>
    </>
  );
  return to ? (
    <Link to={to} className="card card-link" aria-label={`${label}: ${value}, ${hint}`}>
      {inner}
    </Link>
  ) : (
    <div className="card">{inner}</div>
  );
}

function GettingStarted({ s }: { s: Stats }) {
  const steps = [
    { done: s.sources > 0, text: "Create a source and point your provider at its ingest URL", to: "/sources/new" },
    { done: s.destinations > 0, text: "Add a destination: the URL of your service", to: "/destinations/new" },
    { done: s.connections > 0, text: "Connect the source to the destination", to: "/connections/new" },
  ];
  return (
    <section className="panel" aria-label="Getting started">
      <h2>Getting started</h2>
      <ol style={{ margin: 0, paddingLeft: 20, display: "grid", gap: 6 }}>
        {steps.map((st) => (
          <li key={st.to}>
            {st.done ? (
              <span className="muted">
                <s>{st.text}</s> ✓
              </span>
            ) : (
              <Link to={st.to}>{st.text}</Link>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The width of an element, kept up to date (the chart is drawn in real pixels so its text stays legible on a phone). */
function useWidth<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width] as const;
}

/** Received and delivered per hour as paired bars, drawn in SVG (no chart library). */
function BarChart({ buckets }: { buckets: Bucket[] }) {
  const [ref, measured] = useWidth<HTMLDivElement>();
  const W = Math.max(measured, 280);
  const H = W < 500 ? 180 : 220;
  const pad = { l: 34, r: 6, t: 10, b: 24 };
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.received, b.delivered)));
  const nice = niceMax(max);
  const slot = (W - pad.l - pad.r) / buckets.length;
  const gap = Math.min(4, slot * 0.2);
  const bw = Math.max(1, (slot - gap) / 2);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / nice);
  const ticks = [0, nice / 2, nice];
  // A time label at least every ~70 px.
  const every = [2, 3, 4, 6, 8, 12].find((n) => n * slot >= 70) ?? 12;
  const hour = (t: number) => new Date(t).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const hourLabel = (t: number) => new Date(t).toLocaleTimeString([], { hour: "numeric" });
  const totalReceived = buckets.reduce((n, b) => n + b.received, 0);
  return (
    <div ref={ref}>
      {measured > 0 ? (
        <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Events per hour over the last 24 hours: ${totalReceived} received, ${buckets.reduce((n, b) => n + b.delivered, 0)} delivered`}>
          {ticks.map((t) => (
            <g key={t}>
              <line className="axis" x1={pad.l} x2={W - pad.r} y1={y(t)} y2={y(t)} strokeDasharray={t === 0 ? undefined : "3 4"} />
              <text x={pad.l - 6} y={y(t) + 4} textAnchor="end">
                {Number.isInteger(t) ? t : t.toFixed(1)}
              </text>
            </g>
          ))}
          {buckets.map((b, i) => {
            const x = pad.l + i * slot + gap / 2;
            return (
              <g key={b.start}>
                <title>{`${hour(b.start)}–${hour(b.start + HOUR)}: ${b.received} received, ${b.delivered} delivered`}</title>
                <rect x={x} y={y(b.received)} width={bw} height={y(0) - y(b.received)} fill="var(--chart-received)" rx={1.5} />
                <rect x={x + bw} y={y(b.delivered)} width={bw} height={y(0) - y(b.delivered)} fill="var(--chart-delivered)" rx={1.5} />
                {(buckets.length - 1 - i) % every === 0 ? (
                  // The newest label ends at the right edge instead of running past it.
                  <text x={i === buckets.length - 1 ? W - pad.r : x + bw} y={H - 6} textAnchor={i === buckets.length - 1 ? "end" : "middle"}>
                    {hourLabel(b.start)}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
      ) : (
        <div style={{ height: 220 }} />
      )}
    </div>
  );
}

function niceMax(v: number) {
  if (v <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

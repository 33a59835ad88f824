import { useEffect, useRef, useState } from "react";
import type { ClusterBody } from "../../../src/contracts/cluster";
import type { StatsBody } from "../../../src/contracts/stats";
import { api } from "../api";
import { Empty, ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { DataTable } from "../components/table";
import { fullTime, ms, num, pct, timeAgo } from "../format";
import { useInterval, useLoad } from "../hooks";
import { useDebounced, useEventStream } from "../live";
import { Link } from "../router";
import { useCan, useInstanceOwner } from "../can";

const HOUR = 3600 * 1000;

interface Bucket {
  start: number;
  received: number;
  delivered: number;
  /** Events received in the hour that are now failed (in the DLQ). */
  failed: number;
  /** Delivery attempts in the hour that failed, retried later or not. */
  deliveriesFailed: number;
}

interface Stats {
  buckets: Bucket[];
  received: number;
  /** Events received in the window that are now delivered (what the chart and the card's link show). */
  delivered: number;
  successRate: number | null;
  failedAttempts: number;
  dlq: number;
  queued: number;
  oldestPendingSeconds: number;
  slowest: StatsBody["slowest_destinations"];
  sources: number;
  destinations: number;
  connections: number;
  openIssues: number;
}

/** The whole dashboard is one request: GET /v1/stats. */
async function loadStats(): Promise<Stats> {
  const s = await api.get<StatsBody>("/stats");
  const buckets = s.buckets.map((b) => ({ start: Date.parse(b.start), received: b.received, delivered: b.delivered, failed: b.failed, deliveriesFailed: b.deliveries_failed }));
  return {
    buckets,
    received: s.events_received_24h,
    delivered: buckets.reduce((n, b) => n + b.delivered, 0),
    successRate: s.success_rate,
    failedAttempts: s.deliveries_failed_24h,
    dlq: s.dlq_size,
    queued: s.queue_depth,
    oldestPendingSeconds: s.oldest_pending_seconds,
    slowest: s.slowest_destinations,
    sources: s.counts.sources,
    destinations: s.counts.destinations,
    connections: s.counts.connections,
    openIssues: s.open_issues,
  };
}

/** A wait in words: "45 s", "12 min", "3 h". */
function waited(seconds: number) {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h`;
}

export function DashboardPage() {
  const stats = useLoad(loadStats, []);
  useInterval(() => void stats.reload(), 30_000);
  // Traffic redraws the dashboard, at most every few seconds.
  const refresh = useDebounced(() => void stats.reload(), 3000);
  useEventStream({ created: refresh, updated: refresh });
  const s = stats.data;
  const canWrite = useCan("write");
  const instanceOwner = useInstanceOwner();

  if (!s) return <PageLoading title="Dashboard" error={stats.error} onRetry={stats.reload} what="Loading the last 24 hours" />;

  const setupDone = s.sources > 0 && s.destinations > 0 && s.connections > 0;

  return (
    <>
      <PageHead title="Dashboard" sub="The last 24 hours, updated as events arrive." />
      <ErrorAlert error={stats.error} />
      {!setupDone && canWrite ? <GettingStarted s={s} /> : null}
      <div className="cards">
        <Card label="Events received" value={num(s.received)} hint="last 24 h" to="/events" />
        <Card label="Delivered" value={num(s.delivered)} hint="last 24 h" to="/events?status=delivered" />
        <Card
          label="Success rate"
          value={s.successRate === null ? "–" : pct(s.successRate * 100)}
          hint={s.successRate === null ? "nothing delivered yet" : `${num(s.failedAttempts)} failed ${s.failedAttempts === 1 ? "attempt" : "attempts"}`}
        />
        <Card label="Open issues" value={num(s.openIssues)} hint={s.openIssues === 0 ? "nothing failing" : "failing deliveries to look at"} to="/issues" />
        <Card label="Dead-letter queue" value={num(s.dlq)} hint="deliveries out of retries" to="/attempts?is_dlq=1" />
        <Card label="Queue depth" value={num(s.queued)} hint={s.oldestPendingSeconds > 0 ? `oldest due ${waited(s.oldestPendingSeconds)} ago` : "queued or in flight"} to="/attempts?status=queued" />
      </div>
      <section className="panel chart" aria-label="Events over 24 hours">
        <div className="panel-head">
          <h2>Events per hour</h2>
          <div className="legend">
            <span style={{ ["--c" as string]: "var(--chart-received)" }}>received</span>
            <span style={{ ["--c" as string]: "var(--chart-delivered)" }}>delivered</span>
            <span style={{ ["--c" as string]: "var(--chart-failed)" }}>failed attempts</span>
          </div>
        </div>
        <BarChart buckets={s.buckets} />
      </section>
      <section className="panel flush" aria-label="Slowest destinations">
        <div className="panel-head" style={{ padding: "14px 16px 0" }}>
          <h2>Slowest destinations</h2>
          <span className="muted" style={{ fontSize: 12 }}>
            average over the last 24 hours
          </span>
        </div>
        {s.slowest.length === 0 ? (
          <Empty title="No deliveries yet">Response times show up here once events are delivered.</Empty>
        ) : (
          <DataTable
            label="Slowest destinations"
            rows={s.slowest}
            rowKey={(d) => d.destination_id}
            columns={[
              {
                label: "Destination",
                render: (d) => (d.destination_name === null ? <span className="muted">{d.destination_id} (deleted)</span> : <Link to={`/destinations/${d.destination_id}`}>{d.destination_name}</Link>),
              },
              { label: "Average", className: "num", render: (d) => ms(d.avg_ms) },
              { label: "Median", className: "num", render: (d) => ms(d.p50_ms) },
              { label: "Slowest", className: "num", render: (d) => ms(d.max_ms) },
              { label: "Attempts", className: "num", render: (d) => num(d.attempts) },
            ]}
          />
        )}
      </section>
      {/* The cluster's nodes name the hosts: the instance owner's alone (docs/teams.md). */}
      {instanceOwner ? <ClusterPanel /> : null}
    </>
  );
}

/** The serve nodes sharing the database (GET /v1/cluster): shown once there is more than one. */
function ClusterPanel() {
  const cluster = useLoad(() => api.get<ClusterBody>("/cluster"), []);
  useInterval(() => void cluster.reload(), 10_000);
  const nodes = cluster.data?.nodes ?? [];
  // Another organization's user may not see the installation's hosts (403): say so rather than show nothing.
  if (cluster.error && !cluster.data) {
    return (
      <section className="panel" aria-label="Cluster">
        <h2>Cluster</h2>
        <p className="muted">{cluster.error}</p>
      </section>
    );
  }
  if (nodes.length < 2) return null;
  return (
    <section className="panel flush" aria-label="Cluster">
      <div className="panel-head" style={{ padding: "14px 16px 0" }}>
        <h2>Cluster</h2>
        <span className="muted" style={{ fontSize: 12 }}>
          {nodes.length} nodes on one database
        </span>
      </div>
      <DataTable
        label="Cluster nodes"
        rows={nodes}
        rowKey={(n) => n.id}
        columns={[
          {
            label: "Node",
            render: (n) => (
              <span title={n.id}>
                {n.hostname} <span className="muted">pid {n.pid}</span>
              </span>
            ),
          },
          { label: "Address", render: (n) => n.address },
          { label: "Version", render: (n) => n.version },
          { label: "Last heartbeat", render: (n) => <span title={fullTime(n.last_heartbeat_at)}>{timeAgo(n.last_heartbeat_at)}</span> },
          {
            label: "Role",
            render: (n) => (
              <>
                {n.scheduler ? <span className="badge info" title="Runs the cluster-wide jobs: retention, job runners, periodic alerts, collection builders">scheduler</span> : null}{" "}
                {n.self ? <span className="badge" title="The node that answered this page">this one</span> : null}
              </>
            ),
          },
        ]}
      />
    </section>
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

/**
 * Received, delivered and failed attempts per hour as grouped bars, drawn in SVG
 * (no chart library). Failures are attempts, not events: a destination that is
 * down shows at once, while its events still wait for their retries.
 */
function BarChart({ buckets }: { buckets: Bucket[] }) {
  const [ref, measured] = useWidth<HTMLDivElement>();
  const W = Math.max(measured, 280);
  const H = W < 500 ? 180 : 220;
  const pad = { l: 34, r: 6, t: 10, b: 24 };
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.received, b.delivered, b.deliveriesFailed)));
  const nice = niceMax(max);
  const slot = (W - pad.l - pad.r) / buckets.length;
  const gap = Math.min(4, slot * 0.2);
  const bw = Math.max(1, (slot - gap) / 3);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / nice);
  const ticks = [0, nice / 2, nice];
  // A time label at least every ~70 px.
  const every = [2, 3, 4, 6, 8, 12].find((n) => n * slot >= 70) ?? 12;
  const hour = (t: number) => new Date(t).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const hourLabel = (t: number) => new Date(t).toLocaleTimeString([], { hour: "numeric" });
  const total = (k: "received" | "delivered" | "deliveriesFailed") => buckets.reduce((n, b) => n + b[k], 0);
  return (
    <div ref={ref}>
      {measured > 0 ? (
        <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Events per hour over the last 24 hours: ${total("received")} received, ${total("delivered")} delivered, ${total("deliveriesFailed")} failed delivery attempts`}>
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
                <title>{`${hour(b.start)}–${hour(b.start + HOUR)}: ${b.received} received, ${b.delivered} delivered, ${b.failed} failed (in the DLQ); ${b.deliveriesFailed} failed delivery ${b.deliveriesFailed === 1 ? "attempt" : "attempts"}`}</title>
                <rect x={x} y={y(b.received)} width={bw} height={y(0) - y(b.received)} fill="var(--chart-received)" rx={1.5} />
                <rect x={x + bw} y={y(b.delivered)} width={bw} height={y(0) - y(b.delivered)} fill="var(--chart-delivered)" rx={1.5} />
                <rect x={x + 2 * bw} y={y(b.deliveriesFailed)} width={bw} height={y(0) - y(b.deliveriesFailed)} fill="var(--chart-failed)" rx={1.5} data-testid={b.deliveriesFailed > 0 ? "failed-bar" : undefined} />
                {(buckets.length - 1 - i) % every === 0 ? (
                  // The newest label ends at the right edge instead of running past it.
                  <text x={i === buckets.length - 1 ? W - pad.r : x + 1.5 * bw} y={H - 6} textAnchor={i === buckets.length - 1 ? "end" : "middle"}>
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

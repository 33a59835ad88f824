/**
 * `hookrelay events tail` on a terminal: a live list of arriving events
 * (ink + react, loaded lazily by the command). ↑/↓ select, Enter shows
 * headers, body and attempts, r retries, Esc goes back, q quits.
 */
import { Box, render, Text, useApp, useInput, useWindowSize } from "ink";
import { useEffect, useRef, useState } from "react";
import { attemptTimes } from "../output/attempts";
import { colorLevel } from "../output/color";
import { ago } from "../output/table";
import { path, type Context } from "../context";
import { openFeed, type FeedEvent, type FeedState } from "../feed";

interface Props {
  ctx: Context;
  sourceIds: string[];
  statuses: string[];
  where: string;
}

type Detail = { id: string; loading: boolean; data?: any; error?: string };

const COLOR = colorLevel(process.stdout) > 0;
/** A colour only when colour is on (NO_COLOR is respected here as everywhere). */
const col = (c: string) => (COLOR ? c : undefined);

const statusColor = (s: string) =>
  ({ delivered: "green", success: "green", verified: "green", active: "green", failed: "red", rejected: "red", pending: "yellow", queued: "yellow", delivering: "yellow", held: "yellow", ignored: "gray", skipped: "gray" })[s] ?? undefined;

const clock = (iso: string) => (iso.length >= 19 ? iso.slice(11, 19) : iso);

/** The sent time; a queued attempt says when it is due. */
function attemptWhen(a: Record<string, unknown>) {
  const t = attemptTimes(a);
  if (t.sent) return clock(t.sent);
  if (t.scheduled) return `scheduled for ${clock(t.scheduled)} (${ago(t.scheduled)})`;
  return "queued";
}
const fit = (s: string, n: number) => (s.length > n ? s.slice(0, Math.max(0, n - 1)) + "…" : s.padEnd(n));

function prettyBody(e: any) {
  if (e.body_encoding !== "utf8") return `(base64) ${e.body}`;
  try {
    return JSON.stringify(JSON.parse(e.body), null, 2);
  } catch {
    return String(e.body ?? "");
  }
}

function TailApp({ ctx, sourceIds, statuses, where }: Props) {
  const { exit } = useApp();
  const { columns, rows } = useWindowSize();
  const [events, setEvents] = useState<FeedEvent[]>([]);
  const [selected, setSelected] = useState(0);
  const [state, setState] = useState<FeedState>({ state: "connecting" });
  const [detail, setDetail] = useState<Detail | null>(null);
  const [scroll, setScroll] = useState(0);
  const [flash, setFlash] = useState<{ text: string; color?: string } | null>(null);
  const [destinations, setDestinations] = useState<Map<string, string>>(new Map());
  const detailRef = useRef<Detail | null>(null);
  detailRef.current = detail;
  const destinationsRef = useRef(destinations);
  destinationsRef.current = destinations;

  /** Destination names for the attempts, fetched once and again when an attempt names one not seen yet. */
  const loadDestinations = (data: any) => {
    const ids: string[] = (data?.delivery_attempts ?? []).map((a: any) => a.destination_id);
    if (ids.every((id) => destinationsRef.current.has(id))) return;
    ctx
      .run<{ destinations: { id: string; name: string }[] }>({ method: "GET", path: "/destinations", expect: "destinations", local: async (deps, scope) => (await import("../../src/domain/destinations")).listDestinations(deps, scope, {}) })
      .then((r) => setDestinations(new Map(r.destinations.map((d) => [d.id, d.name]))))
      .catch(() => {});
  };

  const loadDetail = (id: string, quiet = false) => {
    if (!quiet) {
      setDetail({ id, loading: true });
      // The last action's message belongs to the event it was about.
      setFlash(null);
    }
    ctx
      .run({ method: "GET", path: path`/events/${id}`, expect: "id", local: async (deps, scope) => (await import("../../src/domain/events")).getEvent(deps, scope, id) })
      .then((data) => {
        setDetail((d) => (d && d.id === id ? { id, loading: false, data } : d));
        loadDestinations(data);
      })
      .catch((err: Error) => setDetail((d) => (d && d.id === id ? { id, loading: false, error: err.message } : d)));
  };

  useEffect(() => {
    const feed = openFeed(
      ctx,
      { sourceIds, updates: true },
      {
        onEvent(e, kind) {
          if (statuses.length && !statuses.includes(e.status) && kind === "created") return;
          setEvents((list) => {
            const i = list.findIndex((x) => x.id === e.id);
            if (i >= 0) {
              const next = list.slice();
              next[i] = e;
              return next;
            }
            if (kind === "updated") return list;
            setSelected((s) => (s === 0 ? 0 : s + 1));
            return [e, ...list].slice(0, 1000);
          });
          if (kind === "updated" && detailRef.current?.id === e.id) loadDetail(e.id, true);
        },
        onState: setState,
      },
    );
    // Only what reconnecting cannot mend ends the feed (bad credentials, not a hookrelay server).
    feed.done.catch((err: Error) => exit(err));
    return () => feed.stop();
  }, []);

  const current = events[Math.min(selected, events.length - 1)];

  const retry = (id: string) => {
    setFlash({ text: `retrying ${id}…` });
    ctx
      .run<{ retried: unknown[]; errors: { code: string }[] }>({ method: "POST", path: path`/events/${id}/retry`, expect: "retried", local: async (deps, scope) => (await import("../../src/domain/retries")).retryEvent(deps, scope, id) })
      .then((r) => setFlash({ text: `retry ${id}: ${r.retried.length} queued${r.errors.length ? `, ${r.errors.length} not retried (${r.errors.map((e) => e.code).join(", ")})` : ""}`, color: "green" }))
      .catch((err: Error) => setFlash({ text: `retry failed: ${err.message}`, color: "red" }));
  };

  useInput((input, key) => {
    if (input === "q" || (key.ctrl && input === "c")) return exit();
    if (detail) {
      if (key.escape || key.backspace || key.leftArrow || key.delete) return (setDetail(null), setScroll(0));
      if (key.upArrow || input === "k") return setScroll((s) => Math.max(0, s - 1));
      if (key.downArrow || input === "j") return setScroll((s) => s + 1);
      if (key.pageDown || input === " ") return setScroll((s) => s + 10);
      if (key.pageUp) return setScroll((s) => Math.max(0, s - 10));
      if (input === "r") return retry(detail.id);
      return;
    }
    if (key.upArrow || input === "k") return setSelected((s) => Math.max(0, s - 1));
    if (key.downArrow || input === "j") return setSelected((s) => Math.min(events.length - 1, s + 1));
    if (key.home || input === "g") return setSelected(0);
    if (key.end || input === "G") return setSelected(Math.max(0, events.length - 1));
    if (key.return && current) return (setScroll(0), loadDetail(current.id));
    if (input === "r" && current) return retry(current.id);
  });

  const stateText = state.state === "live" ? "● live" : state.state === "connecting" ? "○ connecting" : `○ reconnecting${state.detail ? ` (${state.detail})` : ""}`;
  const header = (
    <Box justifyContent="space-between" width={columns}>
      <Text bold>
        hookrelay events tail <Text dimColor>{where}</Text>
      </Text>
      <Text color={col(state.state === "live" ? "green" : "yellow")}>{stateText}</Text>
    </Box>
  );
  const footer = (
    <Box flexDirection="column">
      {flash ? <Text color={col(flash.color ?? "cyan")}>{flash.text}</Text> : null}
      <Text dimColor>{detail ? "↑/↓ scroll · r retry · esc back · q quit" : "↑/↓ select · enter details · r retry · q quit"}</Text>
    </Box>
  );

  if (detail) {
    const lines: { text: string; color?: string; bold?: boolean }[] = [];
    if (detail.loading) lines.push({ text: "loading…" });
    else if (detail.error) lines.push({ text: detail.error, color: "red" });
    else if (detail.data) {
      const e = detail.data;
      lines.push({ text: `${e.id}  ${e.method} ${e.path ?? ""}  from ${e.source_name ?? e.source_id}`, bold: true });
      lines.push({ text: `received ${e.received_at}  status ${e.status}  verification ${e.verification_status}  dedup ${e.dedup_status}  ${e.payload_size} bytes`, color: statusColor(e.status) });
      if (e.verification_error) lines.push({ text: `verification error: ${e.verification_error}`, color: "red" });
      lines.push({ text: "" }, { text: "Headers", bold: true });
      for (const [k, v] of Object.entries(e.headers ?? {})) lines.push({ text: `  ${k}: ${v}` });
      lines.push({ text: "" }, { text: "Body", bold: true });
      for (const l of prettyBody(e).split("\n")) lines.push({ text: "  " + l });
      lines.push({ text: "" }, { text: `Delivery attempts (${e.delivery_attempts?.length ?? 0})`, bold: true });
      for (const a of e.delivery_attempts ?? []) {
        const destination = destinations.get(a.destination_id) ?? a.destination_id;
        lines.push({
          text: `  ${attemptWhen(a)}  ${destination}  ${a.status}  ${a.status_code ?? "-"}  ${a.latency_ms ?? "-"} ms  #${a.attempt_number ?? "-"} ${a.trigger_type ?? ""}${a.forced ? " (forced)" : ""}${a.error ? "  " + a.error : ""}`,
          color: statusColor(a.status),
        });
      }
    }
    const room = Math.max(3, rows - 4);
    const top = Math.min(scroll, Math.max(0, lines.length - room));
    return (
      <Box flexDirection="column">
        {header}
        {lines.slice(top, top + room).map((l, i) => (
          <Text key={i} bold={l.bold} color={col(l.color ?? "")} wrap="truncate-end">
            {l.text || " "}
          </Text>
        ))}
        {footer}
      </Box>
    );
  }

  const room = Math.max(3, rows - 5);
  const start = Math.max(0, Math.min(selected - Math.floor(room / 2), events.length - room));
  const srcWidth = Math.max(8, Math.min(24, columns - 80));
  return (
    <Box flexDirection="column">
      {header}
      <Text bold>{`  ${fit("TIME", 8)}  ${fit("SOURCE", srcWidth)}  ${fit("METHOD", 6)}  ${fit("VERIFICATION", 12)}  ${fit("STATUS", 9)}  ID`}</Text>
      {events.length === 0 ? <Text dimColor>{"  waiting for events… (send one to a source's ingest URL)"}</Text> : null}
      {events.slice(start, start + room).map((e, i) => {
        const isSel = start + i === selected;
        return (
          <Text key={e.id} inverse={isSel} wrap="truncate-end">
            {isSel ? "› " : "  "}
            {fit(clock(e.received_at), 8)}
            {"  "}
            {fit(e.source_name ?? e.source_id, srcWidth)}
            {"  "}
            {fit(e.method, 6)}
            {"  "}
            <Text color={col(statusColor(e.verification_status) ?? "")}>{fit(e.verification_status, 12)}</Text>
            {"  "}
            <Text color={col(statusColor(e.status) ?? "")}>{fit(e.status, 9)}</Text>
            {"  "}
            <Text dimColor>{e.id}</Text>
          </Text>
        );
      })}
      {footer}
    </Box>
  );
}

/** Runs the TUI until q; resolves when it has exited. */
export async function runTail(props: Props) {
  // The caller chose the TUI because stdout is a terminal; ink would fall back to
  // final-frame output whenever CI is set in the environment, even on a TTY.
  const app = render(<TailApp {...props} />, { exitOnCtrlC: true, alternateScreen: true, interactive: true });
  await app.waitUntilExit();
}

import type { Command } from "commander";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REDACTED_HEADER_VALUE } from "../../src/contracts/sources";
import { act, verb } from "../command";
import { path } from "../context";
import { usageError } from "../errors";
import { FEED_OVERLAP_MS, openFeed, type FeedEvent } from "../feed";
import { ago } from "../output/table";
import { configDir, writeJsonPrivate } from "../profiles";
import { resolveSources } from "../sourceRefs";

/** Not forwarded: hop-by-hop headers and those the local request sets itself. */
const DROP = new Set(["host", "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "proxy-authenticate", "accept-encoding"]);

/**
 * Where `--since last` resumes, per server/source/URL: every event received
 * before `received_at`, and `id` itself, was handled (forwarded with a 2xx,
 * or deliberately skipped), except within the read horizon below it (see
 * `recent`). A failed forward holds the position there, so the next run
 * sends that event again; `done` lists events after the position that were
 * handled anyway, so they are not sent twice.
 *
 * On PostgreSQL with several nodes an event stamped a moment before the
 * position may commit after it (src/db/horizon.ts). So the position is
 * final only a read horizon below `received_at` (and not before `from`,
 * where the position's runs began): `recent` lists the events handled
 * within that horizon, and the next run reads it again and forwards what
 * is not listed.
 */
interface Checkpoint {
  received_at: string;
  id: string;
  done?: string[];
  recent?: Handled[];
  from?: string;
}
interface Handled {
  id: string;
  received_at: string;
}
type Checkpoints = Record<string, Checkpoint>;
const checkpointFile = () => join(configDir(), "listen-state.json");
/** Enough to cover a long outage of the local server; past it an event may be forwarded twice, never lost. */
const MAX_DONE = 1000;
/** How far below a position events may still arrive: the read horizon of PostgreSQL (the client cannot tell the server's store). */
const UNSETTLED_MS = FEED_OVERLAP_MS;

const minus = (iso: string, ms: number) => new Date(Date.parse(iso) - ms).toISOString();

/** Before this, every event was handled (or predates the runs): checkpoints of older versions have no `recent` and settle at the position. */
function settledBefore(mark: Checkpoint): string {
  if (!mark.recent) return mark.received_at;
  const below = minus(mark.received_at, UNSETTLED_MS);
  return mark.from && mark.from > below ? mark.from : below;
}

function readCheckpoints(): Checkpoints {
  try {
    return existsSync(checkpointFile()) ? (JSON.parse(readFileSync(checkpointFile(), "utf8")) as Checkpoints) : {};
  } catch {
    return {};
  }
}

/** Writes this run's positions over a fresh read, so another listen's positions (other sources or URLs) survive. */
function saveCheckpoint(key: string, mark: Checkpoint) {
  try {
    writeJsonPrivate(checkpointFile(), { ...readCheckpoints(), [key]: mark });
  } catch {}
}

/**
 * The position of one source during a run. `resumed`: this run started from
 * the saved position (`--since last`), so it continues it; otherwise the
 * first event this run handles (or fails) starts a new one, from the feed's start.
 */
class Position {
  private held = false;
  private continues: boolean;
  /** The saved position this run resumed from: what earlier runs handled. */
  private readonly earlier: Checkpoint | undefined;
  /** Where this run's feed began (a new position covers what arrives from there). */
  start: string | undefined;

  constructor(
    private mark: Checkpoint | undefined,
    resumed: boolean,
    private readonly save: (mark: Checkpoint) => void,
  ) {
    this.earlier = resumed ? mark : undefined;
    this.continues = this.earlier !== undefined;
  }

  /** Handled by an earlier run: settled, the position itself, handled within the horizon, or listed as done (which moves the position on). */
  seen(e: FeedEvent) {
    if (!this.earlier) return false;
    if (e.received_at < settledBefore(this.earlier) || e.id === this.earlier.id) return true;
    if (this.earlier.recent?.some((r) => r.id === e.id)) return true;
    if (!this.earlier.done?.includes(e.id)) return false;
    this.handled(e);
    return true;
  }

  /** Forwarded or deliberately skipped: the position moves past it (never back), unless an earlier failure holds it. */
  handled(e: FeedEvent) {
    this.begin(e);
    const mark = this.mark;
    const done = (mark?.done ?? []).filter((id) => id !== e.id);
    const newest = mark && mark.id && mark.received_at > e.received_at ? mark : { received_at: e.received_at, id: e.id };
    const floor = minus(this.held ? mark!.received_at : newest.received_at, UNSETTLED_MS);
    const recent = [...(mark?.recent ?? []).filter((r) => r.id !== e.id && r.received_at >= floor), { id: e.id, received_at: e.received_at }].slice(-MAX_DONE);
    const from = mark?.from ?? this.start;
    if (this.held) this.mark = { ...mark!, done: [...done, e.id].slice(-MAX_DONE), recent };
    else this.mark = { ...newest, ...(done.length ? { done } : {}), recent, ...(from ? { from } : {}) };
    this.save(this.mark);
  }

  /** Not forwarded: the position stays before it (`--since` is inclusive), so the next `--since last` sends it again. */
  failed(e: FeedEvent) {
    this.begin(e);
    if (!this.held && !this.mark) this.mark = { received_at: e.received_at, id: "", recent: [], ...(this.start ? { from: this.start } : {}) };
    this.held = true;
    this.save(this.mark!);
  }

  /** A run that did not resume starts its own position, covering what its feed delivers from its start. */
  private begin(e: FeedEvent) {
    if (this.continues) return;
    this.mark = undefined;
    if (!this.start || this.start > e.received_at) this.start = e.received_at;
    this.continues = true;
  }
}

/** `30s`, `15m`, `2h`, `1d`, an ISO 8601 time, or `last` → an ISO time (or null for `last` without a checkpoint). */
export function parseSince(raw: string, now = Date.now()): string | "last" {
  if (raw === "last") return "last";
  const d = /^(\d+)\s*(s|m|h|d)$/.exec(raw.trim());
  if (d) return new Date(now - Number(d[1]) * { s: 1e3, m: 6e4, h: 36e5, d: 864e5 }[d[2] as "s"]).toISOString();
  const t = Date.parse(raw);
  if (!/^\d{4}-\d\d-\d\d/.test(raw) || Number.isNaN(t)) throw usageError(`--since must be a duration (90s, 15m, 2h, 1d), an ISO 8601 time, or "last"; got "${raw}"`);
  return new Date(t).toISOString();
}

/** `hookrelay listen SOURCE… --forward URL`: forwards a source's events to a local URL as they arrive. */
export function registerListen(program: Command) {
  act(
    verb(program, "listen <source...>", "Forward a source's events to a local URL as they arrive (local development, like `stripe listen`)", [
      "hookrelay listen github --forward http://localhost:3000/webhooks",
      "hookrelay listen src_0123456789abcdef0123456789abcdef stripe --forward http://localhost:3000/hooks --since 2h",
      "hookrelay listen github --forward http://localhost:3000/webhooks --since last   # what arrived while you were away",
    ])
      .requiredOption("--forward <url>", "the only URL events are sent to (method, headers and body as received)")
      .option("--since <when>", "first forward what arrived since: 30m, 2h, 1d, an ISO 8601 time, or last (since this listen last forwarded)")
      .option("--timeout <seconds>", "give the local server this long per event", "30"),
    async (ctx, o, [...refs]) => {
      let forward: URL;
      try {
        forward = new URL(o.forward);
        if (forward.protocol !== "http:" && forward.protocol !== "https:") throw new Error();
      } catch {
        throw usageError(`--forward must be an http(s) URL, got "${o.forward}"`);
      }
      const timeoutMs = Math.max(1, Number(o.timeout) || 30) * 1000;
      const sources = await resolveSources(ctx, refs.flat());
      const names = new Map(sources.map((s) => [s.id, s.name]));
      const server = ctx.remote ? ctx.remote.url : `local:${ctx.local!.location}`;
      const key = (sourceId: string) => `${server}|${sourceId}|${forward.href}`;

      const checkpoints = readCheckpoints();
      let since = o.since ? parseSince(o.since) : undefined;
      const resumed = since === "last";
      if (since === "last") {
        // Each source resumes at its own position; one never forwarded before starts with the earliest of them (or now).
        // Each position is read again from where it is final (settledBefore): late commits below it arrive still.
        since = sources
          .map((s) => checkpoints[key(s.id)])
          .filter((m): m is Checkpoint => Boolean(m))
          .map(settledBefore)
          .sort()[0];
      }
      const positions = new Map(sources.map((s) => [s.id, new Position(checkpoints[key(s.id)], resumed, (mark) => saveCheckpoint(key(s.id), mark))]));

      const c = ctx.out.c;
      if (!ctx.json) {
        process.stderr.write(`${c.bold("Forwarding")} ${sources.map((s) => s.name).join(", ")} → ${c.cyan(forward.href)}${since ? ` (from ${since})` : ""}  ${c.dim("Ctrl-C to stop")}\n`);
      }
      const print = (e: FeedEvent, line: ForwardLine) => {
        if (ctx.json) {
          process.stdout.write(JSON.stringify({ event_id: e.id, source_id: e.source_id, method: e.method, received_at: e.received_at, forward_url: forward.href, ...line }) + "\n");
          return;
        }
        const outcome = line.skipped
          ? c.yellow(`skipped: ${line.skipped}`) + c.dim(` (${line.reason})`)
          : (line.status !== null ? (line.status < 300 ? c.green : line.status < 400 ? c.yellow : c.red)(`${line.status}`) + c.dim(` ${line.duration_ms} ms`) : c.red(`error: ${line.error}`)) +
            (forwarded(line) ? "" : c.dim("  (held: the next --since last sends it again)"));
        const late = Date.now() - Date.parse(e.received_at) > 60_000 ? c.dim(`  (received ${ago(e.received_at)})`) : "";
        process.stdout.write(`${c.dim(e.received_at.slice(11, 19))}  ${c.cyan(e.id)}  ${e.method.padEnd(6)} ${(names.get(e.source_id) ?? e.source_id).padEnd(16)} → ${outcome}${late}\n`);
      };

      const feed = openFeed(
        ctx,
        { sourceIds: sources.map((s) => s.id), since },
        {
          onEvent: async (e) => {
            const position = positions.get(e.source_id);
            if (!position || position.seen(e)) return;
            const started = performance.now();
            let detail: EventDetail;
            try {
              detail = await ctx.run<EventDetail>({
                method: "GET",
                path: path`/events/${e.id}`,
                expect: "id",
                local: async (deps, scope) => (await import("../../src/domain/events")).getEvent(deps, scope, e.id),
              });
            } catch (err) {
              position.failed(e);
              return print(e, { status: null, duration_ms: Math.round(performance.now() - started), error: `cannot read the event: ${(err as Error).message}`, skipped: null, reason: null });
            }
            // The relay never delivers what failed its checks (a forged signature, a rejected body); neither does listen.
            if (detail.status === "rejected") {
              position.handled(e);
              return print(e, { status: null, duration_ms: 0, error: null, skipped: "rejected", reason: rejectionReason(detail) });
            }
            const line = await forwardOne(e, detail, forward, timeoutMs, started);
            if (forwarded(line)) position.handled(e);
            else position.failed(e);
            print(e, line);
          },
          onStart: (start) => {
            for (const p of positions.values()) p.start = start;
          },
          onState: (s) => {
            if (s.state === "reconnecting" && s.detail && !ctx.json) process.stderr.write(c.yellow(`reconnecting: ${s.detail}\n`));
            if (s.state === "live" && !ctx.json) process.stderr.write(c.dim("ready\n"));
          },
        },
      );
      const stop = () => feed.stop();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      await feed.done;
    },
  );
}

interface EventDetail {
  status: string;
  headers: Record<string, string>;
  body: string;
  body_encoding: string;
  method: string;
  verification_status: string;
  verification_error: string | null;
  schema_errors: { path: string; message: string }[] | null;
}

interface ForwardLine {
  /** The local server's answer, or null when none came (or the event was skipped). */
  status: number | null;
  duration_ms: number;
  error: string | null;
  /** Why the event was deliberately not forwarded (`rejected`), or null. */
  skipped: string | null;
  reason: string | null;
}

/** Forwarded means what a delivery means: the local server answered 2xx. Anything else is sent again by `--since last`. */
const forwarded = (l: ForwardLine) => l.skipped !== null || (l.status !== null && l.status >= 200 && l.status < 300);

function rejectionReason(d: EventDetail) {
  if (d.verification_status === "failed") return `signature verification failed${d.verification_error ? `: ${d.verification_error}` : ""}`;
  const first = d.schema_errors?.[0];
  if (first) return `body does not match the source's JSON Schema: ${first.path || "/"} ${first.message}${d.schema_errors!.length > 1 ? ` (+${d.schema_errors!.length - 1} more)` : ""}`;
  return "rejected by the source's checks";
}

/** Sends one event, as received, to the local URL (never following redirects elsewhere). */
async function forwardOne(e: FeedEvent, detail: EventDetail, url: URL, timeoutMs: number, started: number): Promise<ForwardLine> {
  try {
    const headers = new Headers();
    // A header stored as [redacted] held the source's secret (docs/ingest.md "Redacted headers"): it is not sent, as delivery does not send it.
    for (const [k, v] of Object.entries(detail.headers ?? {})) if (!DROP.has(k.toLowerCase()) && v !== REDACTED_HEADER_VALUE) headers.set(k, v);
    headers.set("x-hookrelay-event-id", e.id);
    headers.set("x-hookrelay-source-id", e.source_id);
    const body = detail.body_encoding === "base64" ? Buffer.from(detail.body, "base64") : detail.body;
    const method = detail.method.toUpperCase();
    const res = await fetch(url, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, duration_ms: Math.round(performance.now() - started), error: null, skipped: null, reason: null };
  } catch (err) {
    return { status: null, duration_ms: Math.round(performance.now() - started), error: fetchErrorText(err, timeoutMs), skipped: null, reason: null };
  }
}

const FETCH_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (DNS lookup failed)",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ConnectionRefused: "connection refused",
};

/** A failed fetch in words, once: `connection refused (ECONNREFUSED)`. */
function fetchErrorText(err: unknown, timeoutMs: number) {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === "TimeoutError") return `timed out after ${timeoutMs / 1000} s`;
  const words = e.code ? FETCH_ERRORS[e.code] : undefined;
  if (words) return `${words} (${e.code})`;
  return e.message ?? String(err);
}

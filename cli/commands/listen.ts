import type { Command } from "commander";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { act, verb } from "../command";
import { path, type Context } from "../context";
import { usageError } from "../errors";
import { openFeed, type FeedEvent } from "../feed";
import { ago } from "../output/table";
import { configDir, writeJsonPrivate } from "../profiles";
import { resolveSources } from "../sourceRefs";

/** Not forwarded: hop-by-hop headers and those the local request sets itself. */
const DROP = new Set(["host", "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "proxy-authenticate", "accept-encoding"]);

type Checkpoints = Record<string, { received_at: string; id: string }>;
const checkpointFile = () => join(configDir(), "listen-state.json");

function readCheckpoints(): Checkpoints {
  try {
    return existsSync(checkpointFile()) ? (JSON.parse(readFileSync(checkpointFile(), "utf8")) as Checkpoints) : {};
  } catch {
    return {};
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
      const server = ctx.remote ? ctx.remote.url : `local:${ctx.local!.dataDir}`;
      const key = (sourceId: string) => `${server}|${sourceId}|${forward.href}`;

      const checkpoints = readCheckpoints();
      const skip = new Set<string>();
      let since = o.since ? parseSince(o.since) : undefined;
      if (since === "last") {
        const marks = sources.map((s) => checkpoints[key(s.id)]).filter((m): m is { received_at: string; id: string } => Boolean(m));
        marks.forEach((m) => skip.add(m.id));
        // Sources never forwarded before start now; the others resume after their last forwarded event.
        since = marks.map((m) => m.received_at).sort()[0];
      }

      const c = ctx.out.c;
      if (!ctx.json) {
        process.stderr.write(`${c.bold("Forwarding")} ${sources.map((s) => s.name).join(", ")} → ${c.cyan(forward.href)}${since ? ` (from ${since})` : ""}  ${c.dim("Ctrl-C to stop")}\n`);
      }

      const feed = openFeed(
        ctx,
        { sourceIds: sources.map((s) => s.id), since },
        {
          onEvent: async (e) => {
            if (skip.has(e.id)) return;
            const result = await forwardOne(ctx, e, forward, timeoutMs);
            checkpoints[key(e.source_id)] = { received_at: e.received_at, id: e.id };
            try {
              writeJsonPrivate(checkpointFile(), checkpoints);
            } catch {}
            if (ctx.json) {
              process.stdout.write(JSON.stringify({ event_id: e.id, source_id: e.source_id, method: e.method, received_at: e.received_at, forward_url: forward.href, ...result }) + "\n");
            } else {
              const outcome =
                result.status !== null
                  ? (result.status < 300 ? c.green : result.status < 400 ? c.yellow : c.red)(`${result.status}`) + c.dim(` ${result.duration_ms} ms`)
                  : c.red(`error: ${result.error}`);
              process.stdout.write(`${c.dim(e.received_at.slice(11, 19))}  ${c.cyan(e.id)}  ${e.method.padEnd(6)} ${(names.get(e.source_id) ?? e.source_id).padEnd(16)} → ${outcome}${Date.now() - Date.parse(e.received_at) > 60_000 ? c.dim(`  (received ${ago(e.received_at)})`) : ""}\n`);
            }
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

/** Sends one event, as received, to the local URL (never following redirects elsewhere). */
async function forwardOne(ctx: Context, e: FeedEvent, url: URL, timeoutMs: number): Promise<{ status: number | null; duration_ms: number; error: string | null }> {
  const started = performance.now();
  try {
    const detail = await ctx.run<{ headers: Record<string, string>; body: string; body_encoding: string; method: string; query: string | null }>({
      method: "GET",
      path: path`/events/${e.id}`,
      expect: "id",
      local: async (deps, scope) => (await import("../../src/domain/events")).getEvent(deps, scope, e.id),
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(detail.headers ?? {})) if (!DROP.has(k.toLowerCase())) headers.set(k, v);
    headers.set("x-hookrelay-event-id", e.id);
    headers.set("x-hookrelay-source-id", e.source_id);
    const body = detail.body_encoding === "base64" ? Buffer.from(detail.body, "base64") : detail.body;
    const method = detail.method.toUpperCase();
    const res = await fetch(url, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, duration_ms: Math.round(performance.now() - started), error: null };
  } catch (err) {
    const message = (err as Error).name === "TimeoutError" ? `timed out after ${timeoutMs / 1000} s` : ((err as Error).message ?? String(err));
    return { status: null, duration_ms: Math.round(performance.now() - started), error: message };
  }
}

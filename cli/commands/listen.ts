import type { Command } from "commander";
import { act, verb } from "../command";
import { path } from "../context";
import { usageError } from "../errors";
import { followUntilInterrupted, openFeed, type FeedEvent } from "../feed";
import { forwarded, forwardOne, rejectionReason, type EventDetail, type ForwardLine } from "../listen/forward";
import { Position, readCheckpoints, saveCheckpoint, settledBefore, type Checkpoint } from "../listen/position";
import { ago } from "../output/table";
import { resolveSources } from "../sourceRefs";

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
      const server = ctx.mode === "local" ? `local:${ctx.where}` : ctx.where;
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
      await followUntilInterrupted(feed);
    },
  );
}

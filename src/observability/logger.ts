import { logTraceFields } from "./traceContext";

/**
 * JSON lines when stdout is not a TTY (or asked for), readable text otherwise.
 * A line written while a traced request or attempt is handled carries its
 * `trace_id` and `span_id`: the active span's, or those the caller gives
 * (none without tracing: no span is ever active).
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** One writer for the process's own streams, however many loggers write to them (each adds listeners to them). */
let processLines: ((line: string) => void) | undefined;

export function createLogger(opts: { level: LogLevel; format: "auto" | "text" | "json"; out?: (line: string) => void }): Logger {
  const json = opts.format === "json" || (opts.format === "auto" && !process.stdout.isTTY);
  const out = opts.out ?? (processLines ??= lineWriter([process.stdout, process.stderr]));
  const log = (level: LogLevel, msg: string, fields: Record<string, unknown> = {}) => {
    if (order[level] < order[opts.level]) return;
    const time = new Date().toISOString();
    // Ids given by the caller (a delivery attempt's span, src/delivery/outcomeBatch.ts) win over the active span's.
    if (fields.trace_id === undefined) fields = { ...fields, ...logTraceFields() };
    if (json) {
      out(JSON.stringify({ time, level, msg, ...fields }));
    } else {
      const extra = Object.entries(fields)
        .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
        .join(" ");
      out(`${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${msg}${extra ? " " + extra : ""}`);
    }
  };
  return {
    debug: (m, f) => log("debug", m, f),
    info: (m, f) => log("info", m, f),
    warn: (m, f) => log("warn", m, f),
    error: (m, f) => log("error", m, f),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Bun's PostgreSQL client prints some lines of its own with console.warn
 * (`bun:sql LISTEN "hookrelay_bus" failed, retrying: …` while the database is
 * away). They go through the logger instead, as JSON like every other line:
 * a warning, or debug while the database is already known to be away (its
 * one warning said so). Lines that are not the driver's pass through as they
 * were. Returns the undo; several servers in one process share the one hook.
 */
const driverRoutes = new Set<{ logger: Logger; quiet: () => boolean }>();
let originalWarn: typeof console.warn | null = null;

export function routeDriverLines(logger: Logger, database: { isDown(): boolean }): () => void {
  const route = { logger, quiet: () => database.isDown() };
  driverRoutes.add(route);
  if (!originalWarn) {
    const original = (originalWarn = console.warn);
    console.warn = (...args: unknown[]) => {
      const first = args[0];
      const target = [...driverRoutes].at(-1);
      if (!target || typeof first !== "string" || !first.startsWith("bun:sql")) return original.apply(console, args);
      const line = args.map(String).join(" ");
      if (target.quiet()) target.logger.debug("database driver", { driver: line });
      else target.logger.warn("database driver", { driver: line });
    };
  }
  return () => {
    driverRoutes.delete(route);
    if (driverRoutes.size === 0 && originalWarn) {
      console.warn = originalWarn;
      originalWarn = null;
    }
  };
}

/**
 * Writes each line to the first of `streams` still open. A server must outlive
 * its log streams: when a pipe's reader goes away (a closed `| tee`, a log
 * shipper restarting), that stream is dropped and its lines go to the next one;
 * with none left they are dropped. A write to a closed pipe fails after the
 * call returns (its callback gets EPIPE), so the line that found out is
 * written again on the next stream rather than lost.
 */
export function lineWriter(streams: NodeJS.WritableStream[]): (line: string) => void {
  const open = new Set(streams);
  for (const stream of streams) stream.on("error", () => open.delete(stream));
  const writeFrom = (first: number, text: string) => {
    for (let i = first; i < streams.length; i++) {
      const stream = streams[i]!;
      if (!open.has(stream)) continue;
      let moved = false;
      const moveOn = () => {
        open.delete(stream);
        if (moved) return;
        moved = true;
        writeFrom(i + 1, text);
      };
      try {
        stream.write(text, (err) => err && moveOn());
      } catch {
        moveOn();
      }
      return;
    }
  };
  return (line) => writeFrom(0, line + "\n");
}

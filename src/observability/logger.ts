/** JSON lines when stdout is not a TTY (or asked for), readable text otherwise. */
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

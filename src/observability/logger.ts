/** JSON lines when stdout is not a TTY (or asked for), readable text otherwise. */
export type LogLevel = "debug" | "info" | "warn" | "error";
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(opts: { level: LogLevel; format: "auto" | "text" | "json"; out?: (line: string) => void }): Logger {
  const json = opts.format === "json" || (opts.format === "auto" && !process.stdout.isTTY);
  const out = opts.out ?? ((line: string) => process.stdout.write(line + "\n"));
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

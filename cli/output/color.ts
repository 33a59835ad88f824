import { Chalk, type ChalkInstance } from "chalk";

/**
 * Colour only on a terminal, never when NO_COLOR is set (https://no-color.org),
 * forced by FORCE_COLOR. chalk's own detection does not read NO_COLOR, so the
 * decision is made here once and handed to a private chalk instance.
 */
export function colorLevel(stream: { isTTY?: boolean } = process.stdout, env: Record<string, string | undefined> = process.env): 0 | 1 | 2 | 3 {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === "0" || force === "false") return 0;
    if (/^[123]$/.test(force)) return Number(force) as 1 | 2 | 3;
    return 1;
  }
  if (!stream.isTTY || env.TERM === "dumb") return 0;
  if (env.COLORTERM === "truecolor" || env.COLORTERM === "24bit") return 3;
  return /256/.test(env.TERM ?? "") ? 2 : 1;
}

export function makeChalk(level = colorLevel()): ChalkInstance {
  return new Chalk({ level });
}

/** Status words coloured by meaning; anything unknown stays plain. */
const GOOD = new Set(["active", "success", "delivered", "verified", "unique", "completed", "ok", "enabled", "resolved"]);
const BAD = new Set(["failed", "disabled", "rejected", "revoked", "error", "open"]);
const WAIT = new Set(["pending", "queued", "delivering", "paused", "held", "running", "acknowledged", "skipped"]);
const DIM = new Set(["ignored", "duplicate", "null", "-"]);

export function colorValue(c: ChalkInstance, column: string, value: string): string {
  if (value === "" || value === "-") return c.dim(value);
  if (column === "id" || column.endsWith("_id")) return c.cyan(value);
  if (/status$|^revoked$|^enabled$|^is_dlq$/.test(column) || column === "state") {
    const v = value.toLowerCase();
    if (GOOD.has(v)) return c.green(value);
    if (BAD.has(v)) return c.red(value);
    if (WAIT.has(v)) return c.yellow(value);
    if (DIM.has(v)) return c.dim(value);
    if (/^[2]\d\d$/.test(v)) return c.green(value);
    if (/^[45]\d\d$/.test(v)) return c.red(value);
  }
  return value;
}

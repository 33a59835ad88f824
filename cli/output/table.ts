import type { ChalkInstance } from "chalk";
import { colorValue } from "./color";

export interface Column {
  key: string;
  header?: string;
  /** Derives the cell from the row (default: row[key]). */
  get?: (row: Record<string, unknown>) => unknown;
}
export type ColumnSpec = string | Column;

const col = (c: ColumnSpec): Column => (typeof c === "string" ? { key: c } : c);

/** One cell as text: null → empty, objects → JSON, everything else String(). */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

const MAX_CELL = 56;
// Only for width: strips the ANSI colour codes chalk adds.
const visible = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "").length;
const truncate = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

/** Plain rows for pipes: tab-separated, no header, tabs/newlines escaped. */
export function tsv(rows: Record<string, unknown>[], columns: ColumnSpec[]): string {
  const cols = columns.map(col);
  const esc = (s: string) => s.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\r?\n/g, "\\n");
  return rows.map((r) => cols.map((c) => esc(cellText(c.get ? c.get(r) : r[c.key]))).join("\t") + "\n").join("");
}

const isIdColumn = (key: string) => key === "id" || key.endsWith("_id");

/** `3m ago`, `in 4m`: times in a terminal table are read relative to now (records keep the full ISO time). */
export function ago(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (!/^\d{4}-\d\d-\d\dT/.test(iso) || Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  const span = (n: number) => (n < 60 ? `${n}s` : n < 3600 ? `${Math.floor(n / 60)}m` : n < 86400 ? `${Math.floor(n / 3600)}h` : `${Math.floor(n / 86400)}d`);
  if (Math.abs(s) >= 30 * 86400) return iso.slice(0, 10);
  return s < 0 ? `in ${span(-s)}` : `${span(s)} ago`;
}

/** The columns a user reads a table for (ingest URL, destination URL, error): never cut, wrapped when they do not fit. */
export const isWanted = (key: string) => key.endsWith("url") || key === "error";

/**
 * How soon a column goes when the terminal is too narrow: counts, sizes and
 * timings first, then times, then types; names, statuses, ids and the
 * wanted columns stay (null: never dropped).
 */
function dropRank(key: string): number | null {
  if (/_count$|_size$|_ms$|^attempt_number$|^max_retries$|^retry_strategy$|^http_method$|^method$|^trigger_type$|^response_status$/.test(key)) return 3;
  if (key.endsWith("_at")) return 2;
  if (key.endsWith("_type")) return 1;
  return null;
}

const GAP = 2;
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)/g;
/** Narrower than this, a wanted column would be mostly line breaks: the terminal wraps the row instead. */
const MIN_WRAP = 16;
const PROSE_WRAP = 40;

/** Lines of at most `w`: broken after a space when one is near the end, else mid-word (URLs have none). */
function chunk(s: string, w: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest.length > w) {
    const space = rest.lastIndexOf(" ", w);
    const at = space > w / 2 ? space + 1 : w;
    out.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at);
  }
  out.push(rest);
  return out;
}

/**
 * An aligned table for a terminal: bold header, coloured status and id cells.
 * Ids are always whole: a user copies them into the next command, and a
 * shortened one (`evt_…4766de`) would name nothing there. Too wide for the
 * terminal, the table gives way in this order: text columns are cut down to a minimum, an error wraps
 * onto more lines, the least useful columns are dropped (counts, then times,
 * then types), and last a URL wraps. A wanted column is never cut.
 */
export function table(rows: Record<string, unknown>[], columns: ColumnSpec[], c: ChalkInstance, width = process.stdout.columns || 160): string {
  const cols = columns.map(col);
  const headers = cols.map((k) => (k.header ?? k.key).toUpperCase().replace(/_/g, " "));
  const full = rows.map((r) =>
    cols.map((k) => {
      const text = cellText(k.get ? k.get(r) : r[k.key]);
      const shown = k.key.endsWith("_at") ? text.replace(ISO_TIME, (t) => ago(t)) : text;
      return (isWanted(k.key) ? shown : truncate(shown, MAX_CELL)) || "-";
    }),
  );
  const naturalOf = (cells: string[][]) => headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const total = (w: number[], shown: number[]) => shown.reduce((a, i) => a + w[i]!, 0) + GAP * (shown.length - 1);

  const cells = full;
  const natural = naturalOf(cells);
  let shown = cols.map((_, i) => i);
  const shrinkable = (i: number) => !isIdColumn(cols[i]!.key) && !isWanted(cols[i]!.key);
  const min = natural.map((w, i) => (shrinkable(i) ? Math.min(w, Math.max(12, headers[i]!.length)) : w));
  // Prose (an error) reads fine wrapped to this width, so it wraps before other columns go; a URL only wraps as the last resort.
  const proseMin = natural.map((w, i) => (cols[i]!.key === "error" ? Math.min(w, PROSE_WRAP) : w));

  /** Cuts the widest cuttable columns of `shown` towards their minimum, then wraps prose, until the table fits. */
  const fit = (): number[] => {
    const w = natural.slice();
    let sum = total(w, shown);
    for (const floor of [min, proseMin]) {
      while (sum > width) {
        let widest = -1;
        for (const i of shown) if (w[i]! > floor[i]! && (floor === proseMin || shrinkable(i)) && (widest < 0 || w[i]! > w[widest]!)) widest = i;
        if (widest < 0) break;
        w[widest]!--;
        sum--;
      }
    }
    return w;
  };
  let widths = fit();
  while (total(widths, shown) > width) {
    let victim = -1;
    for (const i of shown.slice(1)) {
      const rank = dropRank(cols[i]!.key);
      if (rank !== null && !isWanted(cols[i]!.key) && (victim < 0 || rank >= dropRank(cols[victim]!.key)!)) victim = i;
    }
    if (victim < 0) break;
    shown = shown.filter((i) => i !== victim);
    widths = fit();
  }
  // Still too wide: the wanted columns share what is left and wrap.
  const wanted = shown.filter((i) => isWanted(cols[i]!.key));
  const over = total(widths, shown) - width;
  if (over > 0 && wanted.length > 0) {
    const rest = total(widths, shown) - wanted.reduce((a, i) => a + widths[i]!, 0);
    const each = Math.floor((width - rest) / wanted.length);
    if (each >= MIN_WRAP) for (const i of wanted) widths[i] = Math.min(widths[i]!, Math.max(each, headers[i]!.length));
  }

  const pad = (s: string, w: number) => s + " ".repeat(Math.max(0, w - visible(s)));
  const join = (parts: string[]) => parts.join(" ".repeat(GAP)).trimEnd();
  const lines = [join(shown.map((i) => c.bold(pad(truncate(headers[i]!, widths[i]!), widths[i]!))))];
  for (const row of cells) {
    const parts = shown.map((i) => (isWanted(cols[i]!.key) ? chunk(row[i]!, widths[i]!) : [truncate(row[i]!, widths[i]!)]));
    const height = Math.max(...parts.map((p) => p.length));
    for (let line = 0; line < height; line++) {
      lines.push(join(shown.map((i, n) => pad(parts[n]![line] === undefined ? "" : colorValue(c, cols[i]!.key, parts[n]![line]!), widths[i]!))));
    }
  }
  return lines.join("\n") + "\n";
}

/** One object as `key  value` lines (a terminal) or `key\tvalue` (a pipe). */
export function record(obj: Record<string, unknown>, keys: ColumnSpec[] | undefined, c: ChalkInstance | null): string {
  const cols = (keys ?? Object.keys(obj)).map(col);
  if (!c) return tsv(cols.map((k) => ({ k: k.header ?? k.key, v: k.get ? k.get(obj) : obj[k.key] })), ["k", "v"]);
  const w = Math.max(...cols.map((k) => (k.header ?? k.key).length));
  return (
    cols
      .map((k) => {
        const text = cellText(k.get ? k.get(obj) : obj[k.key]);
        return `${c.bold((k.header ?? k.key).padEnd(w))}  ${text === "" ? c.dim("-") : colorValue(c, k.key, text)}`;
      })
      .join("\n") + "\n"
  );
}

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

/** `3m ago`: times in a terminal table are read relative to now (records keep the full ISO time). */
export function ago(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (!/^\d{4}-\d\d-\d\dT/.test(iso) || Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 0) return iso.slice(0, 16).replace("T", " ");
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  if (s < 30 * 86400) return `${Math.floor(s / 86400)}d ago`;
  return iso.slice(0, 10);
}

/**
 * An aligned table for a terminal: bold header, coloured status and id cells.
 * Too wide for the terminal: the widest text columns are cut (never ids);
 * if it still does not fit, the terminal wraps it.
 */
export function table(rows: Record<string, unknown>[], columns: ColumnSpec[], c: ChalkInstance, width = process.stdout.columns || 160): string {
  const cols = columns.map(col);
  const headers = cols.map((k) => (k.header ?? k.key).toUpperCase().replace(/_/g, " "));
  const cells = rows.map((r) =>
    cols.map((k) => {
      const text = cellText(k.get ? k.get(r) : r[k.key]);
      return truncate(k.key.endsWith("_at") ? ago(text) : text, MAX_CELL) || "-";
    }),
  );
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const min = cols.map((k, i) => (isIdColumn(k.key) ? widths[i]! : Math.min(widths[i]!, Math.max(12, headers[i]!.length))));
  const gap = 2;
  let total = widths.reduce((a, b) => a + b, 0) + gap * (widths.length - 1);
  while (total > width) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) if (widths[i]! > min[i]! && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    if (widest < 0) break;
    widths[widest]!--;
    total--;
  }
  const pad = (s: string, w: number) => s + " ".repeat(Math.max(0, w - visible(s)));
  const lines = [headers.map((h, i) => c.bold(pad(truncate(h, widths[i]!), widths[i]!))).join(" ".repeat(gap)).trimEnd()];
  for (const row of cells) {
    lines.push(row.map((v, i) => pad(colorValue(c, cols[i]!.key, truncate(v, widths[i]!)), widths[i]!)).join(" ".repeat(gap)).trimEnd());
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

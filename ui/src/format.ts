/** Display helpers: times, sizes, numbers, JSON. */

export function timeAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 0) {
    const ahead = -s;
    if (ahead < 60) return "in a few seconds";
    if (ahead < 3600) return `in ${Math.round(ahead / 60)} min`;
    if (ahead < 86400) return `in ${Math.round(ahead / 3600)} h`;
    return `in ${Math.round(ahead / 86400)} d`;
  }
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 30) return `${Math.floor(s / 86400)} d ago`;
  return new Date(t).toLocaleDateString();
}

export function fullTime(iso: string | null | undefined): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function num(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  return n.toLocaleString();
}

export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  if (n < 1000) return `${Math.round(n)} ms`;
  return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1)} s`;
}

export function pct(n: number | null | undefined): string {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  return `${n >= 99.95 || n === 0 ? n.toFixed(0) : n.toFixed(1)}%`;
}

/** Pretty JSON when the text is JSON, else the text itself. */
export function prettyJson(text: string | null | undefined): { text: string; isJson: boolean } {
  if (text === null || text === undefined || text === "") return { text: "", isJson: false };
  try {
    return { text: JSON.stringify(JSON.parse(text), null, 2), isJson: true };
  } catch {
    return { text, isJson: false };
  }
}

/** JSON columns arrive as JSON-encoded strings (spec): parse them, tolerating objects and null. */
export function parseJsonField<T>(v: unknown, fallback: T): T {
  if (v === null || v === undefined || v === "") return fallback;
  if (typeof v !== "string") return v as T;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

export function shortId(id: string | null | undefined): string {
  if (!id) return "–";
  const m = /^([a-z]+_)?([0-9a-f]{32})$/.exec(id);
  if (!m) return id;
  // Ids may be time-ordered (their start is shared by neighbours): the end tells them apart.
  return `${m[1] ?? ""}…${m[2]!.slice(-8)}`;
}

/** ISO string → value for <input type="datetime-local"> (local time, minutes). */
export function toLocalInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(v: string): string | undefined {
  if (!v) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** "1 event", "3 events". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

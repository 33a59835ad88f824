import type { AlertNotification } from "./types";

/** The measured numbers as label/value pairs for people: `failure_percent` → `failure percent`. */
export function dataFields(data: Record<string, unknown>): [string, string][] {
  return Object.entries(data)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => [k.replaceAll("_", " "), typeof v === "object" ? JSON.stringify(v) : String(v)]);
}

/** One line that says what happened: the subject of an email, the text of a chat message. */
export function headline(n: AlertNotification): string {
  if (n.type === "alert.test") return `Test notification from hookrelay: ${n.reason}`;
  // The reason of a resolution starts "Resolved: ".
  if (n.type === "alert.resolved") return `Alert "${n.ruleName}": ${n.reason}`;
  return `Alert "${n.ruleName}" fired: ${n.reason}`;
}

export const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

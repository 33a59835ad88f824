import type { ChalkInstance } from "chalk";
import type { ConfigChange } from "../src/contracts/relayFile";

/**
 * A plan as a person reads it, Terraform-like: `+` create (green), `~` update
 * (yellow) with each changed field `field: old → new`, `-` delete (red).
 * Secrets never appear: `(secret changed)`.
 */
export function planText(changes: ConfigChange[], c: ChalkInstance): string {
  const lines: string[] = [];
  for (const change of changes) {
    const title = `${change.kind} ${change.name}`;
    if (change.action === "create") lines.push(c.green(`+ ${title}`));
    else if (change.action === "delete") lines.push(c.red(`- ${title}`));
    else {
      lines.push(c.yellow(`~ ${title}`));
      for (const f of change.fields) lines.push(`    ${f.field}: ${f.secret ? c.dim("(secret changed)") : `${shown(f.before)} → ${shown(f.after)}`}`);
    }
  }
  const count = (action: ConfigChange["action"]) => changes.filter((ch) => ch.action === action).length;
  lines.push("", `Plan: ${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete.`);
  return lines.join("\n") + "\n";
}

/** A value on one line, long ones cut: a transform or a schema is read in the file, not in the plan. */
function shown(value: unknown): string {
  const text = value === undefined ? "null" : JSON.stringify(value);
  return text.length > 120 ? text.slice(0, 117) + "..." : text;
}

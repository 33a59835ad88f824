import { loadConfig } from "./config";
import { serverOptions } from "./options";

export type ConfigSource = "flag" | "env" | "default";

export interface ExplainedOption {
  value: unknown;
  source: ConfigSource;
  flag: string;
  env: string;
  /** What the default means when there is no value (e.g. "generated and printed once"). */
  default_label?: string;
  /** A duration as the operator wrote it (`24h`, `5d`, or the default's label); `value` is in milliseconds. */
  as_written?: string;
  redacted?: true;
}

export const REDACTED = "[redacted]";

/**
 * The configuration `serve` would run with for these flags and variables,
 * each value with where it came from, secrets redacted: for `hookrelay
 * config print`. Same precedence and parsing as loadConfig (it is called).
 */
export function explainConfig(flags: Record<string, string | undefined> = {}, env: Record<string, string | undefined> = process.env): Record<string, ExplainedOption> {
  const config = loadConfig(flags, env) as Record<string, unknown>;
  const out: Record<string, ExplainedOption> = {};
  for (const [key, spec] of Object.entries(serverOptions)) {
    const source: ConfigSource = flags[key] !== undefined ? "flag" : env[spec.env] !== undefined ? "env" : "default";
    const value = config[key] ?? null;
    const secret = "secret" in spec && spec.secret === true && value !== null;
    const raw = source === "flag" ? flags[key] : source === "env" ? env[spec.env] : undefined;
    const isDuration = spec.flag.endsWith("<duration>");
    const asWritten = !isDuration ? undefined : raw !== undefined ? raw.trim() || "off" : (spec.defaultLabel ?? "off");
    out[key] = {
      value: secret ? redact(String(value)) : value,
      source,
      flag: spec.flag.split(" ")[0]!,
      env: spec.env,
      ...(spec.defaultLabel !== undefined ? { default_label: spec.defaultLabel } : {}),
      ...(asWritten !== undefined ? { as_written: asWritten } : {}),
      ...(secret ? { redacted: true as const } : {}),
    };
  }
  return out;
}

/** A URL keeps everything but its password (which server, which user); anything else goes entirely. */
function redact(value: string): string {
  try {
    const u = new URL(value);
    if (u.host) return u.password ? `${u.protocol}//${u.username}:${REDACTED}@${u.host}${u.pathname === "/" ? "" : u.pathname}` : REDACTED;
  } catch {}
  return REDACTED;
}

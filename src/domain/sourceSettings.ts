import { AppError } from "../contracts/errors";
import type { VerificationType } from "../contracts/sources";
import { invalidIpEntries } from "../rules/ipFilter";
import { compileSchema, InvalidSchemaError } from "../rules/schemaCheck";
import { verificationProblems } from "../rules/verify";

/** A source's settings as given (JSON objects, IP lists) and as they must make sense together: every problem found is one validation_error detail. */

export type Issue = { field: string; message: string };

/** A JSON object given as an object or as its JSON text → its canonical JSON text. */
export function jsonObjectText(field: string, value: unknown, issues: Issue[]): string | null {
  if (value === null || value === undefined) return null;
  let v = value;
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      issues.push({ field: `body.${field}`, message: "must be a JSON object (or its JSON text)" });
      return null;
    }
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) {
    issues.push({ field: `body.${field}`, message: "must be a JSON object" });
    return null;
  }
  return JSON.stringify(v);
}

/** A CIDR list → JSON array text; every entry checked. */
export function ipListText(field: string, value: string[] | null | undefined, issues: Issue[]): string | null {
  if (value === null || value === undefined) return null;
  const entries = value.map((e) => e.trim()).filter((e) => e !== "");
  for (const i of invalidIpEntries(entries)) issues.push({ field: `body.${field}.${i}`, message: `"${entries[i]}" is not an IPv4/IPv6 address or CIDR` });
  return JSON.stringify(entries);
}

/** The settings that must make sense together, as they will be after the write. */
export interface Settings {
  verificationEnabled: number;
  verificationType: string | null;
  /** Only when a new secret is given: existing ones were checked when saved. */
  newSecret: string | null;
  hasSecret: boolean;
  verificationHeader: string | null;
  verificationConfig: string | null;
  dedupEnabled: number;
  dedupStrategy: string | null;
  dedupField: string | null;
  schemaValidationEnabled: number;
  jsonSchema: string | null;
}

export function settingsIssues(s: Settings): Issue[] {
  const issues: Issue[] = [];
  if (s.verificationType) {
    const config = s.verificationConfig ? JSON.parse(s.verificationConfig) : {};
    for (const p of verificationProblems(s.verificationType as VerificationType, s.newSecret, s.verificationHeader, config)) {
      issues.push({ field: `body.${p.field}`, message: p.message });
    }
  }
  if (s.verificationEnabled) {
    if (!s.verificationType) issues.push({ field: "body.verification_type", message: "is required when verification is enabled (or pick a template)" });
    if (!s.hasSecret) issues.push({ field: "body.verification_secret", message: "is required when verification is enabled" });
  }
  if ((s.dedupStrategy === "header" || s.dedupStrategy === "field") && !s.dedupField) {
    issues.push({ field: "body.dedup_field", message: `is required with dedup_strategy ${s.dedupStrategy}` });
  }
  if (s.dedupStrategy === "field" && s.dedupField && s.dedupField.split(".").some((seg) => seg === "")) {
    issues.push({ field: "body.dedup_field", message: "must be a dot path such as data.id" });
  }
  if (s.schemaValidationEnabled && !s.jsonSchema) issues.push({ field: "body.json_schema", message: "is required when schema validation is enabled" });
  if (s.jsonSchema) {
    try {
      compileSchema(s.jsonSchema);
    } catch (err) {
      if (!(err instanceof InvalidSchemaError)) throw err;
      issues.push({ field: "body.json_schema", message: `is not a valid JSON Schema: ${err.message}` });
    }
  }
  return issues;
}

export function throwIfIssues(issues: Issue[]) {
  if (issues.length > 0) throw new AppError("validation_error", "Invalid source settings", issues);
}

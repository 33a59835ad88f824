/** A payload refused by a JSON Schema (422 schema_violation), as the API explains it and as a form shows it under the payload. */
import type { ApiError } from "./api";

export type SchemaViolation = { path: string; message: string };

/** The refusal a form keeps: the API's message and what is wrong where. */
export type Refusal = { message: string; errors: SchemaViolation[] };

/** The 422's details: `{topic|event_type, errors: [{path, message}]}`. */
export function violations(e: ApiError): SchemaViolation[] {
  const d = e.details as { errors?: unknown } | undefined;
  if (!d || !Array.isArray(d.errors)) return [];
  return d.errors.filter((x): x is SchemaViolation => typeof x === "object" && x !== null && typeof (x as SchemaViolation).message === "string");
}

export function SchemaRefusal({ refusal }: { refusal: Refusal | null }) {
  if (!refusal) return null;
  return (
    <div className="alert error" role="alert" data-testid="schema-violation">
      {refusal.message}
      {refusal.errors.length > 0 ? (
        <ul className="violations">
          {refusal.errors.map((v, i) => (
            <li key={i}>
              <code>{v.path || "(the payload)"}</code> {v.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

import Ajv, { type ValidateFunction } from "ajv";
import Ajv2019 from "ajv/dist/2019";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { utf8OrNull } from "./json";
import { errorMessage } from "../contracts/errors";

/**
 * JSON Schema checks with ajv: each schema is compiled once and kept by its
 * text, so the hot path only runs the compiled function. Draft-07 unless the
 * schema's `$schema` names 2019-09 or 2020-12.
 */
const options = {
  allErrors: true,
  // Unknown keywords (vendor annotations) are tolerated; a malformed schema still fails meta-validation.
  strict: false,
  // A schema's $id must not collide with another source's schema in the shared instance.
  addUsedSchema: false,
} as const;

function withFormats<T extends Ajv>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

let draft07: Ajv | undefined;
let draft2019: Ajv | undefined;
let draft2020: Ajv | undefined;

function ajvFor(schema: Record<string, unknown>): Ajv {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  if (dialect.includes("2020-12")) return (draft2020 ??= withFormats(new Ajv2020(options)));
  if (dialect.includes("2019-09")) return (draft2019 ??= withFormats(new Ajv2019(options)));
  return (draft07 ??= withFormats(new Ajv(options)));
}

const MAX_CACHED = 1000;
const compiled = new Map<string, ValidateFunction>();

export class InvalidSchemaError extends Error {}

/** The compiled validator for a schema's JSON text; throws InvalidSchemaError when it is no valid schema. */
export function compileSchema(schemaText: string): ValidateFunction {
  let fn = compiled.get(schemaText);
  if (fn) return fn;
  let schema: unknown;
  try {
    schema = JSON.parse(schemaText);
  } catch {
    throw new InvalidSchemaError("not valid JSON");
  }
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) throw new InvalidSchemaError("must be a JSON object");
  try {
    fn = ajvFor(schema as Record<string, unknown>).compile(schema as Record<string, unknown>);
  } catch (err) {
    throw new InvalidSchemaError(errorMessage(err));
  }
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  compiled.set(schemaText, fn);
  return fn;
}

export interface SchemaError {
  /** JSON Pointer into the body (`""` is the whole body). */
  path: string;
  message: string;
}

/** The body's violations of the schema; a body that is not JSON is one violation. Null when valid. */
export function schemaErrors(validate: ValidateFunction, body: Uint8Array, json: () => unknown): SchemaError[] | null {
  const value = json();
  if (value === undefined) {
    return [{ path: "", message: utf8OrNull(body) === null ? "body is not valid UTF-8 JSON" : "body is not valid JSON" }];
  }
  if (validate(value)) return null;
  return (validate.errors ?? []).slice(0, 50).map((e) => ({ path: e.instancePath, message: `${e.message ?? "is invalid"}${e.params && "allowedValues" in e.params ? `: ${JSON.stringify(e.params.allowedValues)}` : ""}` }));
}

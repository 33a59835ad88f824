import { OpenAPIHono, createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { z } from "zod";
import { AppError, fromZod } from "../contracts/errors";
import type { Deps, Scope } from "../domain/deps";
import type { Metrics } from "../observability/metrics";

export type ApiEnv = {
  Variables: {
    deps: Deps;
    metrics: Metrics;
    scope: Scope;
    sessionToken?: string;
    requestId: string;
    /** The socket peer, taken before any middleware replaces the request (src/api/clientAddress.ts). */
    peer?: string | null;
  };
};
export type Api = OpenAPIHono<ApiEnv>;
export type ApiContext = Context<ApiEnv>;

export function newApi(): Api {
  return new OpenAPIHono<ApiEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw fromZod(result.error, "Request validation failed", [result.target === "json" ? "body" : result.target]);
      }
    },
  });
}

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;
type Req<R extends RouteConfig> = NonNullable<R["request"]>;
export type Validated<R extends RouteConfig> = {
  params: Out<Req<R>["params"]>;
  query: Out<Req<R>["query"]>;
  body: Req<R> extends { body: { content: { "application/json": { schema: infer S } } } } ? Out<S> : undefined;
};

/**
 * Registers one operation: the route's schemas validate the request and
 * document it in /v1/openapi.json; the handler gets the parsed input.
 */
export function operation<R extends RouteConfig>(api: Api, route: R, handler: (c: ApiContext, input: Validated<R>) => Response | Promise<Response>) {
  const bodySchema = jsonBodySchema(route);
  if (bodySchema) {
    bodySchemas(api).set(`${route.method} ${route.path}`, bodySchema);
    // After the route's own middleware (its access checks answer first), before @hono/zod-openapi's validators: see readOwnBody.
    const own = (c: ApiContext, next: () => Promise<void>) => readOwnBody(c, next, bodySchema, () => createdWith(api, route));
    const middleware = route.middleware ? (Array.isArray(route.middleware) ? route.middleware : [route.middleware]) : [];
    route = { ...route, middleware: [...middleware, own] };
  }
  const wrapped = (c: ApiContext) =>
    handler(c, {
      params: c.req.valid("param" as never),
      query: c.req.valid("query" as never),
      body: c.req.valid("json" as never),
    } as Validated<R>);
  // A route that reads a JSON body refuses other media types (@hono/zod-openapi's gate answers 415).
  const documented = route.request?.body && !route.responses[415] ? { ...route, responses: { ...route.responses, 415: errorResponse(415) } } : route;
  api.openapi(createRoute(documented), wrapped as never);
}

export const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

/** Response docs: the success shape plus the error statuses the operation can give. */
/** `ok.schema` absent: a response without a body (204). */
export function responses(ok: { status: number; schema?: z.ZodType; description?: string }, errors: number[] = []) {
  const out: RouteConfig["responses"] = {
    [ok.status]: ok.schema
      ? { description: ok.description ?? "Success", content: { "application/json": { schema: ok.schema } } }
      : { description: ok.description ?? "Success" },
  };
  for (const status of errors) out[status] = errorResponse(status);
  return out;
}

const errorResponse = (status: number) => ({ description: errorDescriptions[status] ?? "Error", content: { "application/json": { schema: errorSchema } } });

const errorDescriptions: Record<number, string> = {
  400: "Validation error",
  401: "Missing or invalid authentication",
  403: "Forbidden",
  404: "Not found",
  408: "The request body stalled: no bytes arrived within the request body timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload too large",
  415: "Unsupported media type: the body is not application/json",
  422: "Schema violation",
  429: "Rate limited",
  503: "The database is unavailable (Retry-After says when to try again)",
};

export const jsonBody = <S extends z.ZodType>(schema: S) => ({
  body: { required: true, content: { "application/json": { schema } } },
});

// No length cap: an id that cannot exist is a 404 (normalizeId), not a validation error.
export const idParam = z.object({ id: z.string() });

const bodySchemasOf = new WeakMap<Api, Map<string, z.ZodType>>();
const bodySchemas = (api: Api) => {
  let map = bodySchemasOf.get(api);
  if (!map) bodySchemasOf.set(api, (map = new Map()));
  return map;
};

function jsonBodySchema(route: RouteConfig): z.ZodType | null {
  const media = route.request?.body?.content?.["application/json"];
  const schema = media && "schema" in media ? media.schema : undefined;
  return schema instanceof z.ZodType ? schema : null;
}

/**
 * The body schema of the create operation an update belongs to: `PATCH /x/{id}`
 * is the update of what `POST /x` created. A field the create takes and the
 * update does not cannot change after creation.
 */
function createdWith(api: Api, route: RouteConfig): z.ZodType | null {
  if (route.method !== "patch" && route.method !== "put") return null;
  const collection = route.path.replace(/\/\{[^}/]+\}$/, "");
  return collection === route.path ? null : (bodySchemas(api).get(`post ${collection}`) ?? null);
}

/**
 * What every JSON body goes through before its schema (docs/api.md, "Request
 * bodies"): an empty body is no fields, as fetch wrappers, axios and Postman
 * send `Content-Type: application/json` without one; a field the schema does
 * not name is refused rather than silently dropped (a typo would otherwise
 * change nothing and answer 200); and no text field of ours holds a NUL
 * character, which PostgreSQL's text cannot store and SQLite's can, so both
 * stores answer the same 400. User data inside a body (payloads, metadata,
 * configs: open objects in the schema) is not looked into.
 */
async function readOwnBody(c: ApiContext, next: () => Promise<void>, schema: z.ZodType, createSchema: () => z.ZodType | null) {
  const contentType = c.req.header("content-type");
  if (contentType && /^application\/([a-z-.]+\+)?json/i.test(contentType)) {
    const text = await c.req.text();
    if (text.trim() === "") {
      // hono's json() parses its cached text (a promise, though typed as the text itself).
      (c.req.bodyCache as { text?: unknown }).text = Promise.resolve("{}");
    } else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        // The validator answers malformed JSON.
      }
      if (parsed !== undefined) checkOwnFields(parsed, schema, createSchema);
    }
  }
  await next();
}

type Problem = { field: string; message: string };

function checkOwnFields(value: unknown, schema: z.ZodType, createSchema: () => z.ZodType | null) {
  const unknown: string[] = [];
  const fixed: string[] = [];
  const keys = objectKeys(schema);
  if (keys && isPlainObject(value)) {
    const createKeys = Object.keys(value).some((k) => !keys.has(k)) ? objectKeys(createSchema() ?? z.never()) : null;
    for (const k of Object.keys(value)) {
      if (keys.has(k)) continue;
      if (createKeys?.has(k)) fixed.push(k);
      else unknown.push(k);
    }
  }
  const problems: Problem[] = [
    ...fixed.map((k) => ({ field: `body.${k}`, message: "cannot be changed after creation" })),
    ...unknown.map((k) => ({ field: `body.${k}`, message: "unknown field" })),
  ];
  if (problems.length) {
    const names = (list: string[]) => list.map((k) => JSON.stringify(k.slice(0, 100))).join(", ");
    const message =
      fixed.length && !unknown.length
        ? `${names(fixed)} cannot be changed after creation`
        : `Unknown field${unknown.length > 1 ? "s" : ""} in the request body: ${names(unknown)}${fixed.length ? `; ${names(fixed)} cannot be changed after creation` : ""}`;
    throw new AppError("validation_error", message, problems.slice(0, 50));
  }
  const nul: Problem[] = [];
  findNul(value, schema, "body", nul);
  if (nul.length) throw new AppError("validation_error", "Text fields may not contain NUL characters (\\u0000)", nul.slice(0, 50).map((p) => ({ field: p.field, message: p.message })));
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

type Def = { type: string; shape?: Record<string, z.ZodType>; catchall?: z.ZodType; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType; element?: z.ZodType; options?: z.ZodType[] };
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Past optional, nullable, default and refinement wrappers to the schema that reads the input. */
function unwrap(schema: z.ZodType): z.ZodType {
  for (let s = schema, i = 0; i < 20; i++) {
    const def = defOf(s);
    if (def.innerType && ["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"].includes(def.type)) s = def.innerType;
    else if (def.type === "pipe" && def.in) s = def.in;
    else return s;
  }
  return schema;
}

/** The field names an object schema takes; null when it takes any (an open object, a record, or not an object). */
function objectKeys(schema: z.ZodType): Set<string> | null {
  const s = unwrap(schema);
  const def = defOf(s);
  if (def.type === "object" && def.shape) {
    if (def.catchall && defOf(def.catchall).type !== "never") return null;
    return new Set(Object.keys(def.shape));
  }
  if (def.type === "union" && def.options) {
    const all = new Set<string>();
    for (const option of def.options) {
      const keys = objectKeys(option);
      if (!keys) return null;
      for (const k of keys) all.add(k);
    }
    return all;
  }
  return null;
}

const OPEN = new Set(["unknown", "any", "record", "custom", "lazy"]);

/** Walks a value along its schema, noting each string of our own fields that holds a NUL; open parts (records, unknown, any) are user data and not walked. */
function findNul(value: unknown, schema: z.ZodType, at: string, out: Problem[]) {
  const def = defOf(unwrap(schema));
  if (OPEN.has(def.type)) return;
  if (typeof value === "string") {
    if (value.includes("\u0000")) out.push({ field: at, message: "may not contain a NUL character" });
    return;
  }
  if (Array.isArray(value)) {
    if (def.type === "array" && def.element) value.forEach((v, i) => findNul(v, def.element!, `${at}.${i}`, out));
    else if (def.type === "union") for (const option of def.options ?? []) if (defOf(unwrap(option)).type === "array") return findNul(value, option, at, out);
    return;
  }
  if (!isPlainObject(value)) return;
  if (def.type === "object" && def.shape) {
    for (const [k, v] of Object.entries(value)) if (def.shape[k]) findNul(v, def.shape[k], `${at}.${k}`, out);
  } else if (def.type === "union") {
    for (const option of def.options ?? []) if (defOf(unwrap(option)).type === "object") findNul(value, option, at, out);
  }
}

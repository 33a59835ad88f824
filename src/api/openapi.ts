import { OpenAPIHono, createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { z } from "zod";
import { AppError } from "../contracts/errors";
import type { Deps, Scope } from "../domain/deps";
import type { Metrics } from "../observability/metrics";

export type ApiEnv = {
  Variables: {
    deps: Deps;
    metrics: Metrics;
    scope: Scope;
    sessionToken?: string;
    requestId: string;
  };
};
export type Api = OpenAPIHono<ApiEnv>;
export type ApiContext = Context<ApiEnv>;

/** Zod issues as the `details` of a validation_error: which field, what is wrong. */
export function issuesToDetails(error: z.ZodError, target?: string) {
  return error.issues.map((i) => ({
    field: [target === "json" ? "body" : target, ...i.path].filter((p) => p !== undefined && p !== "").join("."),
    message: i.message,
  }));
}

export function newApi(): Api {
  return new OpenAPIHono<ApiEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw new AppError("validation_error", "Request validation failed", issuesToDetails(result.error, result.target));
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
export function responses(ok: { status: number; schema: z.ZodType; description?: string }, errors: number[] = []) {
  const out: RouteConfig["responses"] = {
    [ok.status]: { description: ok.description ?? "Success", content: { "application/json": { schema: ok.schema } } },
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
  409: "Conflict",
  410: "Gone",
  413: "Payload too large",
  415: "Unsupported media type: the body is not application/json",
  422: "Schema violation",
  429: "Rate limited",
};

export const jsonBody = <S extends z.ZodType>(schema: S) => ({
  body: { required: true, content: { "application/json": { schema } } },
});

// No length cap: an id that cannot exist is a 404 (normalizeId), not a validation error.
export const idParam = z.object({ id: z.string() });

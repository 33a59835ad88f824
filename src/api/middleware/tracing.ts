import { SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { context, extractContext, trace } from "../../observability/traceContext";
import { clientAddress } from "../clientAddress";
import type { ApiContext } from "../openapi";

/**
 * A SERVER span per request (OpenTelemetry HTTP server conventions),
 * continuing the caller's `traceparent`/`tracestate`; the handler runs with
 * it active, so the ingest pipeline adds its attributes to it, an outbound
 * message stores its context, and log lines carry its ids. Only installed
 * when tracing is on.
 */
export function traceRequests(tracer: Tracer) {
  return async (c: ApiContext, next: () => Promise<void>) => {
    const method = c.req.method;
    const parent = extractContext(c.req.raw.headers);
    const scheme = c.req.url.startsWith("https:") ? "https" : "http";
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": method,
          "url.scheme": scheme,
          "url.path": c.req.path,
          ...(c.req.header("user-agent") ? { "user_agent.original": c.req.header("user-agent") } : {}),
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = spanRoute(handlerPath(c));
      if (route) {
        span.setAttribute("http.route", route);
        span.updateName(`${method} ${route}`);
      }
      const status = c.res.status;
      span.setAttribute("http.response.status_code", status);
      const client = safeClientAddress(c);
      if (client) span.setAttribute("client.address", client);
      if (status >= 500) {
        span.setAttribute("error.type", String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}

/**
 * The path of the route that answered: the first matched route that is not
 * middleware (`app.use` registers method ALL; the UI's catch-all `*` comes
 * last and is only reached when nothing else answered).
 */
function handlerPath(c: ApiContext): string | undefined {
  return c.req.matchedRoutes.find((r) => r.method !== "ALL")?.path;
}

/** Hono's `/v1/sources/:id` as the conventions write routes (`/v1/sources/{id}`); every ingest path is `/v1/ingest/{source}`. */
function spanRoute(route: string | undefined): string | undefined {
  if (!route || route === "*" || route === "/*") return undefined;
  if (route.startsWith("/v1/ingest/")) return "/v1/ingest/{source}";
  return route.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, "{$1}");
}

function safeClientAddress(c: ApiContext): string | null {
  try {
    return clientAddress(c);
  } catch {
    return null;
  }
}

import { z } from "zod";
import { AppError } from "../../contracts/errors";
import { probe, receive, type IngestRequest } from "../../ingest/pipeline";
import { peerAddress } from "../clientAddress";
import { errorSchema, type Api, type ApiContext } from "../openapi";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * Reads the raw body once, byte-exact. The app's body limit has already
 * refused a declared Content-Length over the limit; the actual size is
 * checked again in case a body arrives without one.
 */
async function readBody(c: ApiContext, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw new AppError("payload_too_large", `Request body exceeds ${maxBytes} bytes`);
  const body = new Uint8Array(await c.req.raw.arrayBuffer());
  if (body.byteLength > maxBytes) throw new AppError("payload_too_large", `Request body exceeds ${maxBytes} bytes`);
  return body;
}

function toIngestRequest(c: ApiContext, sourceId: string): IngestRequest {
  const url = c.req.url;
  const q = url.indexOf("?");
  return {
    sourceId,
    method: c.req.method,
    path: c.req.path,
    query: q >= 0 && q < url.length - 1 ? url.slice(q + 1) : null,
    headers: c.req.raw.headers,
    peerIp: peerAddress(c),
    readBody: () => readBody(c, c.get("deps").settings.maxBodyBytes),
  };
}

/** The public ingest endpoint /ingest/src_<id> (any method; registered before authentication). */
export function registerIngestRoutes(api: Api) {
  const handler = async (c: ApiContext) => {
    const started = performance.now();
    const deps = c.get("deps");
    const sourceId = c.req.param("id") ?? "";
    const result = c.req.method === "HEAD" ? await probe(deps, sourceId, peerAddress(c), c.req.raw.headers) : await receive(deps, toIngestRequest(c, sourceId));
    const metrics = c.get("metrics");
    metrics?.ingestRequests.inc({ outcome: result.outcome });
    if (result.notStored) metrics?.ingestRejectedNotStored.inc({ outcome: result.outcome });
    metrics?.ingestDuration.observe((performance.now() - started) / 1000);
    if (c.req.method === "HEAD") return c.body(null, result.status);
    return c.json(result.body as object, result.status);
  };
  // Hono answers HEAD with the GET route; the handler tells them apart (a HEAD stores nothing).
  // A provider may append a path (e.g. /v1/ingest/src_…/github/push); it is kept on the event.
  api.on([...METHODS], ["/ingest/:id", "/ingest/:id/*"], handler);

  for (const method of METHODS) {
    api.openAPIRegistry.registerPath({
      method: method.toLowerCase() as Lowercase<(typeof METHODS)[number]>,
      path: "/ingest/{id}",
      tags: ["ingest"],
      summary: `Receive a webhook (${method}); public, no API key`,
      security: [],
      request: { params: z.object({ id: z.string() }) },
      responses: {
        200: {
          description: "Stored (or answered a provider handshake)",
          content: { "application/json": { schema: z.object({ success: z.literal(true), event_id: z.string(), duplicate: z.literal(true).optional() }) } },
        },
        401: { description: "Signature invalid (the event is stored with verification_status failed)", content: { "application/json": { schema: errorSchema } } },
        403: { description: "Source disabled or IP address denied", content: { "application/json": { schema: errorSchema } } },
        404: { description: "No such source", content: { "application/json": { schema: errorSchema } } },
        410: { description: "Ephemeral source expired or request_limit reached", content: { "application/json": { schema: errorSchema } } },
        413: { description: "Body over HOOKRELAY_MAX_BODY_BYTES", content: { "application/json": { schema: errorSchema } } },
        422: { description: "Body violates the source's JSON Schema (schema_action reject)", content: { "application/json": { schema: errorSchema } } },
      },
    });
  }
}

import { createHmac } from "node:crypto";
import { call, type TestServer } from "./server";

/** Creates a source through the API and returns it (fails the test on anything but 201). */
export async function createSource(server: TestServer, key: string, body: Record<string, unknown>) {
  const res = await call(server, "POST", "/v1/sources", { key, body });
  if (res.status !== 201) throw new Error(`create source failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.source as Record<string, any> & { id: string; slug: string; ingest_url: string };
}

/** Sends a raw request to a source's ingest URL: status, parsed body, headers. */
export async function ingest(server: TestServer, sourceId: string, opts: { method?: string; body?: string | Uint8Array | ReadableStream; headers?: Record<string, string>; path?: string } = {}) {
  const res = await server.request(`/v1/ingest/${sourceId}${opts.path ?? ""}`, {
    method: opts.method ?? "POST",
    headers: { "content-type": "application/json", ...(opts.headers ?? {}) },
    body: opts.body as BodyInit | undefined,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}

export const hmacHex = (alg: "sha256" | "sha1", secret: string | Buffer, data: string | Buffer) => createHmac(alg, secret).update(data).digest("hex");
export const hmacB64 = (alg: "sha256" | "sha1", secret: string | Buffer, data: string | Buffer) => createHmac(alg, secret).update(data).digest("base64");
export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Reads the stored event through the API. */
export async function getEvent(server: TestServer, key: string, id: string) {
  const res = await call(server, "GET", `/v1/events/${id}`, { key });
  if (res.status !== 200) throw new Error(`get event failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * An accepted event is stored `pending`; the delivery router (running in the
 * test server) then routes it, and with no matching connection marks it
 * `ignored`. Either is what a just-accepted event may show.
 */
export const ACCEPTED_STATUS = /^(pending|ignored)$/;

/** Waits until the router has routed every pending event (no connections: all become ignored). */
export async function waitForRouting(server: TestServer, key: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(server, "GET", "/v1/events?status=pending&limit=1", { key });
    if (res.body.pagination.total === 0) return;
    if (Date.now() > deadline) throw new Error("events still pending");
    await Bun.sleep(25);
  }
}

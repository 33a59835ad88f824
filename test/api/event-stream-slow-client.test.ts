import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { SSE_MAX_QUEUED } from "../../src/api/eventStream";
import { createSource, ingest } from "../helpers/ingest";
import { call, type TestServer } from "../helpers/server";
import { scrapeMetrics } from "../helpers/metrics";
import { useServer } from "../helpers/fixture";

let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

async function metric(name: string): Promise<number> {
  const text = await scrapeMetrics(server);
  const m = new RegExp(`^${name} (\\d+)`, "m").exec(text);
  return m ? Number(m[1]) : NaN;
}

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/** A client on a raw socket that reads the response head and the first comment, then stops reading. */
async function stalledClient(): Promise<{ socket: Socket; received: () => number; closed: Promise<void> }> {
  const url = new URL(server.url);
  const socket = connect(Number(url.port), url.hostname);
  let text = "";
  let bytes = 0;
  const closed = new Promise<void>((res) => socket.on("close", () => res()));
  socket.on("error", () => {});
  socket.on("data", (d: Buffer) => {
    bytes += d.length;
    if (text.length < 4096) text += d.toString();
  });
  socket.write(`GET /v1/events/stream HTTP/1.1\r\nHost: ${url.host}\r\nX-API-Key: ${key}\r\nAccept: text/event-stream\r\n\r\n`);
  await until("the stream to open", () => text.includes(": connected"));
  socket.pause();
  return { socket, received: () => bytes, closed };
}

/** A client that reads everything and counts the events. */
async function readingClient() {
  const controller = new AbortController();
  const res = await server.request("/v1/events/stream", { headers: { "x-api-key": key }, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const state = { frames: 0, bytes: 0, done: false };
  void (async () => {
    let tail = "";
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (done || !value) break;
      state.bytes += value.length;
      const text = tail + decoder.decode(value, { stream: true });
      const parts = text.split("\n\n");
      tail = parts.pop()!;
      state.frames += parts.filter((p) => p.includes("data: ")).length;
    }
    state.done = true;
  })();
  return { state, close: () => controller.abort() };
}

describe("GET /v1/events/stream with a client that stops reading", () => {
  it("drops that client once its backlog passes the bound, and keeps serving a client that reads", async () => {
    const source = await createSource(server, key, { name: "firehose" });
    const eventId = (await ingest(server, source.id, { body: JSON.stringify({ pad: "x".repeat(200) }) })).body.event_id;
    const me = (await call(server, "GET", "/v1/auth/me", { key })).body;
    const message = { type: "event.updated" as const, orgId: me.org_id, envId: me.env_id, eventId, sourceId: source.id };

    const reading = await readingClient();
    const stalled = await stalledClient();
    expect(await metric("hookrelay_sse_clients")).toBe(2);

    // Publish in steps the reading client keeps up with; the stalled one falls behind by each step.
    let published = 0;
    const step = 500;
    while ((await metric("hookrelay_sse_dropped_total")) === 0) {
      if (published > 5 * SSE_MAX_QUEUED) throw new Error(`never dropped after ${published} messages`);
      for (let i = 0; i < step; i++) server.deps.bus.publish(message);
      published += step;
      await until(`the reading client to get ${published}`, () => reading.state.frames >= published);
    }
    // It held no more than the kernel's socket buffers, its own buffer and the queue bound before being dropped.
    expect(published).toBeGreaterThan(SSE_MAX_QUEUED);

    await until("the stalled stream to be cleaned up", async () => (await metric("hookrelay_sse_clients")) === 1);
    // The server closed the connection: once read, the socket ends, short of what was published.
    stalled.socket.resume();
    await stalled.closed;
    expect(stalled.received()).toBeLessThan(reading.state.bytes - SSE_MAX_QUEUED * 100);

    // The reading client is still served.
    for (let i = 0; i < 10; i++) server.deps.bus.publish(message);
    await until("the reading client to get 10 more", () => reading.state.frames >= published + 10);
    expect(reading.state.done).toBe(false);
    expect(await metric("hookrelay_sse_dropped_total")).toBe(1);
    reading.close();
  }, 60_000);
});

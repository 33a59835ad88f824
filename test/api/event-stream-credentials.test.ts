/**
 * A live event stream lives no longer than its credential: revoking the key,
 * logging the session out or the session expiring ends it within 5 s, on
 * this node and on another node of the same PostgreSQL database; and one
 * credential holds at most HOOKRELAY_STREAMS_PER_CREDENTIAL streams on a
 * node (docs/api.md, "Live streams").
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys } from "../../src/db/schema";
import { SESSION_TTL_MS } from "../../src/domain/sessions";
import { manualClock } from "../../src/core/clock";
import { describeOnly } from "../helpers/database";
import { waitFor } from "../helpers/delivery";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";

/** Generous: the machine is shared and busy. The server's own bound is 5 s. */
const ENDS_WITHIN_MS = 20_000;

interface OpenStream {
  ended: () => boolean;
  text: () => string;
  close: () => void;
}

/** Opens GET /v1/events/stream and reads it until the server ends it; resolves once `: connected` came. */
async function openStream(server: TestServer, headers: Record<string, string>): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await server.request("/v1/events/stream", { headers, signal: controller.signal });
  expect(res.status, await (res.status === 200 ? "" : res.clone().text())).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const state = { text: "", ended: false };
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (done || !value) break;
      state.text += decoder.decode(value, { stream: true });
    }
    state.ended = true;
  })();
  await waitFor(async () => state.text.includes(": connected"), { what: "the stream to open", timeoutMs: 20_000 });
  return { ended: () => state.ended, text: () => state.text, close: () => controller.abort() };
}

const waitEnded = (s: OpenStream, what: string) => waitFor(async () => s.ended(), { what, timeoutMs: ENDS_WITHIN_MS });

describe("a stream ends with its credential", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  async function keyWithId() {
    const session = await server.session();
    const made = await call(server, "POST", "/v1/auth/api-keys", { headers: session, body: { name: "streamer", scopes: "read" } });
    expect(made.status).toBe(201);
    return { key: made.body.key as string, id: made.body.id as string, session };
  }

  it("when its key is revoked (DELETE /v1/auth/api-keys/{id}); the key's other requests are refused too", async () => {
    const { key, id, session } = await keyWithId();
    const other = await keyWithId();
    const stream = await openStream(server, { "x-api-key": key });
    const bystander = await openStream(server, { "x-api-key": other.key });
    expect((await call(server, "DELETE", `/v1/auth/api-keys/${id}`, { headers: session })).status).toBe(200);
    await waitEnded(stream, "the revoked key's stream to end");
    expect((await server.request("/v1/events/stream", { headers: { "x-api-key": key } })).status).toBe(401);
    // Another key's stream goes on.
    expect(bystander.ended()).toBe(false);
    bystander.close();
  });

  it("when its key is revoked in the database without a word on the bus (the CLI in local mode, a lost notification)", async () => {
    const { key, id } = await keyWithId();
    const stream = await openStream(server, { "x-api-key": key });
    const other = await keyWithId();
    const bystander = await openStream(server, { "x-api-key": other.key });
    await server.deps.db.update(apiKeys).set({ revoked: 1 }).where(eq(apiKeys.id, id));
    await waitEnded(stream, "the stream to end at the next re-check");
    // That re-check read both keys at once: the other key's stream is still open.
    expect(bystander.ended()).toBe(false);
    bystander.close();
  });

  it("when its session logs out; another session of the same user goes on", async () => {
    const session = await server.session();
    const other = await server.session();
    const stream = await openStream(server, { cookie: session.cookie! });
    const bystander = await openStream(server, { cookie: other.cookie! });
    expect((await call(server, "POST", "/v1/auth/logout", { headers: session })).status).toBe(200);
    await waitEnded(stream, "the logged-out session's stream to end");
    expect(bystander.ended()).toBe(false);
    bystander.close();
  });
});

describe("a stream ends when its session expires", () => {
  const clock = manualClock();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({}, tempDir(), clock);
  });
  afterAll(() => server?.close());

  it("by the server's clock, without any request; a session that has not expired goes on", async () => {
    const expiring = await server.session();
    const stream = await openStream(server, { cookie: expiring.cookie! });
    clock.advance(SESSION_TTL_MS - 60_000);
    const fresh = await server.session();
    const bystander = await openStream(server, { cookie: fresh.cookie! });
    clock.advance(60_000);
    await waitEnded(stream, "the expired session's stream to end");
    // The re-check that ended it read both sessions at once: the fresh one's stream is still open.
    expect(bystander.ended()).toBe(false);
    expect((await call(server, "GET", "/v1/auth/me", { headers: expiring })).status).toBe(401);
    bystander.close();
  });
});

describe("HOOKRELAY_STREAMS_PER_CREDENTIAL", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ HOOKRELAY_STREAMS_PER_CREDENTIAL: "3" });
  });
  afterAll(() => server?.close());

  it("answers 429 rate_limited past the limit for one key or session, not for another credential, and frees a slot when a stream closes", async () => {
    const key = await server.apiKey("read");
    const streams = [];
    for (let i = 0; i < 3; i++) streams.push(await openStream(server, { "x-api-key": key }));
    const refused = await call(server, "GET", "/v1/events/stream", { key });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "rate_limited", details: { limit: 3 } });

    // Another key, and a session, have slots of their own.
    const otherKey = await server.apiKey("read");
    const other = await openStream(server, { "x-api-key": otherKey });
    const session = await server.session();
    const sessionStreams = [];
    for (let i = 0; i < 3; i++) sessionStreams.push(await openStream(server, { cookie: session.cookie! }));
    expect((await call(server, "GET", "/v1/events/stream", { headers: { cookie: session.cookie! } })).status).toBe(429);

    // A client that goes away gives its slot back.
    streams[0]!.close();
    const again = await waitFor(
      async () => {
        const controller = new AbortController();
        const res = await server.request("/v1/events/stream", { headers: { "x-api-key": key }, signal: controller.signal });
        if (res.status === 200) return controller;
        await res.body?.cancel();
        return null;
      },
      { what: "the closed stream's slot to free", timeoutMs: 20_000 },
    );
    again.abort();
    for (const s of [...streams, other, ...sessionStreams]) s.close();
  });
});

describeOnly("postgres", "a stream on another node ends with its credential", "nodes share one PostgreSQL database", () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer();
    b = await startTestServer({ HOOKRELAY_DATABASE_URL: a.storeEnv.HOOKRELAY_DATABASE_URL!, HOOKRELAY_SECRET_KEY: a.storeEnv.HOOKRELAY_SECRET_KEY! }, tempDir());
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("a key revoked through node A ends its stream on node B; a session logged out on A ends its stream on B", async () => {
    const session = await a.session();
    const made = await call(a, "POST", "/v1/auth/api-keys", { headers: session, body: { name: "b-streamer", scopes: "read" } });
    const onB = await openStream(b, { "x-api-key": made.body.key });
    expect((await call(a, "DELETE", `/v1/auth/api-keys/${made.body.id}`, { headers: session })).status).toBe(200);
    await waitEnded(onB, "node B's stream to end");

    const sessionOnB = await openStream(b, { cookie: session.cookie! });
    expect((await call(a, "POST", "/v1/auth/logout", { headers: session })).status).toBe(200);
    await waitEnded(sessionOnB, "node B's session stream to end");
  });
});

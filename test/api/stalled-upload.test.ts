import { connect, type Socket } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/** A request body that stops arriving is answered 408 (docs/api.md, "Stalled uploads"), over a raw socket as a stuck client sends it. */

let server: TestServer, key: string;
let sourceId: string;
useServer({ env: { HOOKRELAY_REQUEST_BODY_TIMEOUT: "2s" } }, (s) => ({ server, key } = s));
beforeAll(async () => {
  sourceId = (await call(server, "POST", "/v1/sources", { key, body: { name: "stalled" } })).body.source.id;
});

interface RawClient {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves when the server closed its side. */
  closed: Promise<void>;
}

function open(): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = connect(server.port, "127.0.0.1");
    const closed = new Promise<void>((r) => socket.on("close", () => r()));
    socket.on("data", (d) => (text += d.toString("utf8")));
    socket.on("error", () => {});
    socket.once("connect", () => resolve({ socket, received: () => text, closed }));
    socket.once("error", reject);
  });
}

async function waitFor(what: string, ok: () => boolean, deadlineMs = 30_000) {
  const until = Date.now() + deadlineMs;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const head = (path: string, length: number, extra = "") =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe("a body announced longer than what arrives", () => {
  for (const [what, path, extra] of [
    ["at ingest", () => `/v1/ingest/${sourceId}`, ""],
    ["on an API route", () => "/v1/sources", () => `X-API-Key: ${key}\r\n`],
  ] as const) {
    it(`is answered 408 request_timeout ${what} once no byte arrives for the configured time, and the connection closes`, async () => {
      const client = await open();
      const started = Date.now();
      client.socket.write(head(path(), 100, typeof extra === "function" ? extra() : extra) + '{"a":1');
      await waitFor("the 408", () => /\r\n\r\n[\s\S]*\}/.test(client.received()));
      const elapsed = Date.now() - started;
      const text = client.received();
      expect(text.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)).error.code).toBe("request_timeout");
      // Not before the configured 2 s of silence; well before Bun's own idle timeout (30 s).
      expect(elapsed).toBeGreaterThanOrEqual(1900);
      await client.closed;
    }, 60_000);
  }

  it("nothing is stored from the stalled ingest request", async () => {
    const events = await call(server, "GET", `/v1/events?source_id=${sourceId}`, { key });
    expect(events.body.events).toEqual([]);
  });
});

describe("a slow body that keeps arriving", () => {
  it("is read to the end and answered, however long it takes in all", async () => {
    const client = await open();
    const body = JSON.stringify({ slow: "x".repeat(40) });
    client.socket.write(head(`/v1/ingest/${sourceId}`, body.length));
    // 14 pieces a quarter second apart: 3.5 s in all, longer than the 2 s timeout, never 2 s without a byte.
    const pieces = body.match(/.{1,4}/g)!;
    for (const piece of pieces) {
      client.socket.write(piece);
      await new Promise((r) => setTimeout(r, 250));
    }
    await waitFor("the answer", () => /\r\n\r\n[\s\S]*\}/.test(client.received()));
    expect(client.received().split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    client.socket.destroy();
  }, 60_000);
});

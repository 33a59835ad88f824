import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNetworkError } from "../../src/outgoing/networkErrors";
import { send } from "../../src/outgoing/sender";
import { listAttempts, pipeline, sendEvent, waitFor } from "../helpers/delivery";
import { startTestServer, type TestServer } from "../helpers/server";

/** A port nothing listens on: bound, then closed again. */
function closedPort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

const post = (url: string) => send({ url, method: "POST", headers: { "content-type": "application/json" }, body: new TextEncoder().encode("{}"), secretHeaders: [] }, { timeoutMs: 5000, blockPrivate: false });

describe("connection errors in words", () => {
  it("a closed port: connection refused (ECONNREFUSED), said once", async () => {
    const result = await post(`http://127.0.0.1:${closedPort()}/hook`);
    expect(result).toMatchObject({ ok: false, error: "connection_error", errorDetail: "connection refused (ECONNREFUSED)" });
  });

  it("a server that hangs up without answering: connection reset (ECONNRESET)", async () => {
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (socket) => void socket.end(), data() {} } });
    try {
      const result = await post(`http://127.0.0.1:${listener.port}/hook`);
      expect(result.errorDetail).toBe("connection reset (ECONNRESET)");
    } finally {
      listener.stop(true);
    }
  });

  it("a host that does not resolve names the host and says why once", async () => {
    const result = await post("http://no-such-host.invalid/hook");
    expect(result.error).toBe("connection_error");
    expect(result.errorDetail).toMatch(/^could not resolve no-such-host\.invalid: [a-zA-Z ]+ \((ENOTFOUND|EAI_AGAIN|EAI_FAIL|ENODATA)\)$/);
  });

  it("keeps an unknown code's own message, without repeating the code", () => {
    expect(describeNetworkError({ code: "EWEIRD", message: "EWEIRD: EWEIRD: something odd happened" })).toBe("something odd happened (EWEIRD)");
    expect(describeNetworkError({ code: "CERT_HAS_EXPIRED", message: "certificate has expired" })).toBe("TLS certificate expired (CERT_HAS_EXPIRED)");
    expect(describeNetworkError(new Error("socket hang up"))).toBe("socket hang up");
    expect(describeNetworkError(undefined)).toBe("connection failed");
  });
});

describe("a delivery to a closed port", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("records the error in words on the attempt", async () => {
    const key = await server.apiKey();
    const p = await pipeline(server, key, { url: `http://127.0.0.1:${closedPort()}/hook`, destination: { max_retries: 0 } });
    const eventId = await sendEvent(server, p.sourceId, { n: 1 });
    const [attempt] = await waitFor(async () => {
      const rows = await listAttempts(server, key, { event_id: eventId, status: "failed" });
      return rows.length ? rows : null;
    });
    expect(attempt).toMatchObject({ error: "connection_error", error_detail: "connection refused (ECONNREFUSED)" });
  });
});

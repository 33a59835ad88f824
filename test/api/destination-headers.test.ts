import { existsSync, readFileSync, rmSync } from "node:fs";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { databasePath } from "../../src/db/sqlite/open";
import { destinations } from "../../src/db/schema";
import { dropStore, onPostgres } from "../helpers/database";
import { createConnection, createDestination, createSourceId, listAttempts, sendEvent, waitFor } from "../helpers/delivery";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

/**
 * A destination's custom headers carry credentials (`Authorization`, API
 * keys): they are encrypted at rest like the other secrets, shown masked to
 * a `read` key, and an attempt row keeps their names, not their values
 * (docs/delivery.md).
 */
const SECRET = "Bearer dest-header-secret-4711";
let server: TestServer, key: string, readKey: string, sink: Sink;
useServer({ readKey: true, sink: true }, (s) => ({ server, key, readKey, sink } = s));

const storedHeaders = async (s: TestServer, id: string) => (await s.deps.db.select({ headers: destinations.headers }).from(destinations).where(eq(destinations.id, id)))[0]!.headers;

describe("destination custom headers", () => {
  it("are encrypted in the table, masked for a read key, in full for scope * and a session", async () => {
    const created = await call(server, "POST", "/v1/destinations", { key, body: { name: "h", url: `${sink.url}/h`, headers: { Authorization: SECRET, "X-Team": "ops" } } });
    expect(created.status).toBe(201);
    const id = created.body.destination.id;
    expect(JSON.parse(created.body.destination.headers)).toEqual({ Authorization: SECRET, "X-Team": "ops" });

    const stored = await storedHeaders(server, id);
    expect(stored).toMatch(/^enc:v2:/);
    expect(stored).not.toContain("dest-header-secret");
    expect(stored).not.toContain("ops");

    for (const path of [`/v1/destinations/${id}`, "/v1/destinations"]) {
      const res = await call(server, "GET", path, { key: readKey });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain("dest-header-secret");
      const d = res.body.destination ?? res.body.destinations.find((x: { id: string }) => x.id === id);
      expect(JSON.parse(d.headers)).toEqual({ Authorization: "********", "X-Team": "********" });
    }
    expect(JSON.parse((await call(server, "GET", `/v1/destinations/${id}`, { key })).body.destination.headers)).toEqual({ Authorization: SECRET, "X-Team": "ops" });
    const session = await server.session();
    expect(JSON.parse((await call(server, "GET", `/v1/destinations/${id}`, { headers: session })).body.destination.headers)).toEqual({ Authorization: SECRET, "X-Team": "ops" });

    // A PATCH seals the new value too; null removes them.
    const patched = await call(server, "PATCH", `/v1/destinations/${id}`, { key, body: { headers: { Authorization: "Bearer patched-secret-0815" } } });
    expect(JSON.parse(patched.body.destination.headers)).toEqual({ Authorization: "Bearer patched-secret-0815" });
    expect(await storedHeaders(server, id)).toMatch(/^enc:v2:/);
    expect(await storedHeaders(server, id)).not.toContain("patched-secret");
    const cleared = await call(server, "PATCH", `/v1/destinations/${id}`, { key, body: { headers: null } });
    expect(cleared.body.destination.headers).toBeNull();
    expect(await storedHeaders(server, id)).toBeNull();
  });

  it("are sent to the destination, and the attempt row shows their names with [redacted] values", async () => {
    const sourceId = await createSourceId(server, key);
    const destinationId = await createDestination(server, key, { url: `${sink.url}/sent`, headers: { Authorization: SECRET, "X-Team": "ops" } });
    await createConnection(server, key, { source_id: sourceId, destination_id: destinationId });
    const eventId = await sendEvent(server, sourceId, { hello: "world" });

    const [req] = await waitFor(async () => {
      const got = sink.requests.filter((r) => r.path === "/sent");
      return got.length ? got : null;
    });
    expect(req!.headers["authorization"]).toBe(SECRET);
    expect(req!.headers["x-team"]).toBe("ops");

    const attempts = await waitFor(async () => {
      const list = await listAttempts(server, readKey, { event_id: eventId });
      return list.some((a) => a.status === "success") ? list : null;
    });
    for (const attempt of attempts) {
      const sent = JSON.parse(attempt.request_headers);
      expect(sent["authorization"]).toBe("[redacted]");
      expect(sent["x-team"]).toBe("[redacted]");
      expect(attempt.request_headers).not.toContain("dest-header-secret");
    }
  });

  it.skipIf(onPostgres)("leave no plain value in the SQLite file (SQLite only: the file is the store)", async () => {
    const sourceId = await createSourceId(server, key);
    const destinationId = await createDestination(server, key, { url: `${sink.url}/file`, headers: { "X-Api-Key": "file-scan-secret-9182" } });
    await createConnection(server, key, { source_id: sourceId, destination_id: destinationId });
    const eventId = await sendEvent(server, sourceId, { scan: true });
    await waitFor(async () => (await listAttempts(server, key, { event_id: eventId })).some((a) => a.status === "success"), { what: "the delivery" });
    const path = databasePath(server.dataDir);
    for (const file of [path, `${path}-wal`]) {
      if (existsSync(file)) expect(readFileSync(file).includes("file-scan-secret-9182"), file).toBe(false);
    }
  });

  it("stored in plain text before they were secrets are still sent and shown, and are sealed when serve starts", async () => {
    const dataDir = tempDir();
    const first = await startTestServer({}, dataDir);
    let second: TestServer | null = null;
    let firstRunning = true;
    try {
      const k = await first.apiKey();
      const sourceId = await createSourceId(first, k);
      const destinationId = await createDestination(first, k, { url: `${sink.url}/legacy` });
      await createConnection(first, k, { source_id: sourceId, destination_id: destinationId });
      // As an older version stored them: the JSON text itself.
      await first.deps.db.update(destinations).set({ headers: '{"X-Legacy":"legacy-plain-value"}' }).where(eq(destinations.id, destinationId));
      first.deps.bus.publish({ type: "destination.updated", destinationId });

      expect(JSON.parse((await call(first, "GET", `/v1/destinations/${destinationId}`, { key: k })).body.destination.headers)).toEqual({ "X-Legacy": "legacy-plain-value" });
      await sendEvent(first, sourceId, { n: 1 });
      const [req] = await waitFor(async () => {
        const got = sink.requests.filter((r) => r.path === "/legacy");
        return got.length ? got : null;
      });
      expect(req!.headers["x-legacy"]).toBe("legacy-plain-value");
      await first.stop();
      firstRunning = false;

      second = await startTestServer({}, dataDir);
      const sealed = await storedHeaders(second, destinationId);
      expect(sealed).toMatch(/^enc:v2:/);
      expect(sealed).not.toContain("legacy-plain-value");
      expect(JSON.parse((await call(second, "GET", `/v1/destinations/${destinationId}`, { key: k })).body.destination.headers)).toEqual({ "X-Legacy": "legacy-plain-value" });
    } finally {
      if (firstRunning) await first.stop();
      await second?.stop();
      await dropStore(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

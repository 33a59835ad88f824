import { Database } from "bun:sqlite";
import { describe, expect, it } from "vitest";
import { databasePath } from "../../src/db/sqlite/open";
import { onPostgres } from "../helpers/database";
import { createConnection, createDestination, listAttempts, waitFor } from "../helpers/delivery";
import { createSource, getEvent, ingest } from "../helpers/ingest";
import { insertEvent, scopeOf } from "../helpers/rows";
import type { TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

/**
 * A token source's header is the secret itself (GitLab sends its secret
 * token as is): whoever reads it can forge requests. It is stored as
 * `[redacted]` and never forwarded (docs/ingest.md).
 */
let server: TestServer, key: string, readKey: string, sink: Sink;
useServer({ readKey: true, sink: true }, (s) => ({ server, key, readKey, sink } = s));

const TOKEN = "glpat-very-secret-token-123";

async function gitlabRelay(path: string, opts: { transform?: string; source?: Record<string, unknown> } = {}) {
  const source = await createSource(server, key, { name: `gitlab ${path}`, template: "gitlab", verification_secret: TOKEN, ...opts.source });
  const destinationId = await createDestination(server, key, { url: `${sink.url}${path}` });
  await createConnection(server, key, { source_id: source.id, destination_id: destinationId, ...(opts.transform ? { transform_expression: opts.transform, transform_enabled: true } : {}) });
  return source;
}

describe("token verification headers", () => {
  it("stores a GitLab token as [redacted], shows it so to every key, and never forwards it", async () => {
    const source = await gitlabRelay("/gitlab");
    const body = '{"object_kind":"push"}';
    const res = await ingest(server, source.id, { body, headers: { "X-Gitlab-Token": TOKEN, "X-Gitlab-Event": "Push Hook", "x-custom": "kept" } });
    expect(res.status).toBe(200);

    for (const k of [readKey, key]) {
      const event = await getEvent(server, k, res.body.event_id);
      expect(event.headers["x-gitlab-token"]).toBe("[redacted]");
      expect(event.headers["x-custom"]).toBe("kept");
      // Verified with the real token all the same, and the event type still read from its header.
      expect(event.verification_status).toBe("verified");
      expect(event.event_type).toBe("Push Hook");
      expect(JSON.stringify(event)).not.toContain(TOKEN);
    }

    const [req] = await waitFor(async () => {
      const got = sink.requests.filter((r) => r.path === "/gitlab");
      return got.length ? got : null;
    });
    expect(req!.headers["x-gitlab-token"]).toBeUndefined();
    expect(req!.headers["x-custom"]).toBe("kept");
    expect(JSON.stringify(req!.headers)).not.toContain(TOKEN);

    const attempts = await waitFor(async () => {
      const list = await listAttempts(server, readKey, { event_id: res.body.event_id });
      return list.find((a) => a.status === "success") ? list : null;
    });
    for (const attempt of attempts) {
      const sent = JSON.parse(attempt.request_headers) as Record<string, string>;
      expect(sent["x-gitlab-token"]).toBeUndefined();
      expect(sent["x-custom"]).toBe("kept");
      expect(attempt.request_headers).not.toContain(TOKEN);
    }
  });

  it("redacts a wrong token on a rejected request too, and drops the header from a transformed delivery", async () => {
    const source = await gitlabRelay("/gitlab-transformed", { transform: '{"kind": object_kind}' });
    const rejected = await ingest(server, source.id, { body: "{}", headers: { "x-gitlab-token": "glpat-almost-the-token" } });
    expect(rejected.status).toBe(401);
    const stored = await getEvent(server, readKey, rejected.body.error.details.event_id);
    expect(stored.headers["x-gitlab-token"]).toBe("[redacted]");

    const ok = await ingest(server, source.id, { body: '{"object_kind":"tag_push"}', headers: { "x-gitlab-token": TOKEN } });
    expect(ok.status).toBe(200);
    const [req] = await waitFor(async () => {
      const got = sink.requests.filter((r) => r.path === "/gitlab-transformed");
      return got.length ? got : null;
    });
    expect(JSON.parse(req!.body)).toEqual({ kind: "tag_push" });
    expect(req!.headers["x-gitlab-token"]).toBeUndefined();
  });

  it("redacts the header of any token source, Authorization included, even with verification off", async () => {
    const bearer = await createSource(server, key, { name: "bearer token", verification_type: "token", verification_header: "Authorization", verification_secret: "Bearer s3cr3t-bearer" });
    const ok = await ingest(server, bearer.id, { body: "{}", headers: { authorization: "Bearer s3cr3t-bearer" } });
    expect(ok.status).toBe(200);
    expect((await getEvent(server, readKey, ok.body.event_id)).headers.authorization).toBe("[redacted]");

    const off = await createSource(server, key, { name: "gitlab unverified", template: "gitlab", verification_enabled: false });
    const unverified = await ingest(server, off.id, { body: "{}", headers: { "x-gitlab-token": TOKEN } });
    expect(unverified.status).toBe(200);
    const event = await getEvent(server, readKey, unverified.body.event_id);
    expect(event.verification_status).toBe("skipped");
    expect(event.headers["x-gitlab-token"]).toBe("[redacted]");
  });

  it("redacts the token of an event stored before ingest did, on the way out", async () => {
    const source = await createSource(server, key, { name: "gitlab legacy", template: "gitlab", verification_secret: TOKEN });
    const id = await insertEvent(server, await scopeOf(server, key), source.id, { body: "{}", headers: { "x-gitlab-token": TOKEN, "x-gitlab-event": "Push Hook" } });
    const event = await getEvent(server, readKey, id);
    expect(event.headers["x-gitlab-token"]).toBe("[redacted]");
    expect(event.headers["x-gitlab-event"]).toBe("Push Hook");
  });

  it.skipIf(onPostgres)("leaves no token in the SQLite file (SQLite only: the file is the store)", async () => {
    const source = await createSource(server, key, { name: "gitlab file", template: "gitlab", verification_secret: "glpat-file-check-token" });
    const res = await ingest(server, source.id, { body: "{}", headers: { "x-gitlab-token": "glpat-file-check-token" } });
    expect(res.status).toBe(200);
    const db = new Database(databasePath(server.dataDir), { readonly: true });
    try {
      const rows = db.query("SELECT headers FROM events WHERE headers LIKE '%glpat-file-check-token%'").all();
      expect(rows).toEqual([]);
    } finally {
      db.close();
    }
  });
});

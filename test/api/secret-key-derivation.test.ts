import { rmSync } from "node:fs";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sources } from "../../src/db/schema";
import { createSource, hmacHex, ingest } from "../helpers/ingest";
import { call, startTestServer, tempDir } from "../helpers/server";

/** Sealed by hookrelay before the KDF change, with HOOKRELAY_SECRET_KEY="an operator passphrase". */
const V1_FIXTURE = "enc:v1:6DGDWHefzYgUMFR8udielksTGx7J5pf2CjKsJQF/93oFvxYW99utd8NJPZls3oj+SY8OcmzAsco/5qeHOQc=";
const V1_PLAIN = "whsec_sealed-by-an-older-hookrelay";

describe("HOOKRELAY_SECRET_KEY through a KDF: data written before still works", () => {
  it("reads and verifies with a v1 secret, writes new ones as v2, and reads them after a restart", async () => {
    const dataDir = tempDir();
    const env = { HOOKRELAY_SECRET_KEY: "an operator passphrase" };
    try {
      const first = await startTestServer(env, dataDir);
      const key = await first.apiKey();
      const s = await createSource(first, key, { name: "old", template: "generic-hmac-sha256", verification_secret: "placeholder" });
      // As an older hookrelay left it.
      await first.deps.db.update(sources).set({ verificationSecret: V1_FIXTURE }).where(eq(sources.id, s.id));

      expect((await call(first, "GET", `/v1/sources/${s.id}/secret`, { key })).body).toEqual({ secret: V1_PLAIN });
      const body = '{"n":1}';
      expect((await ingest(first, s.id, { body, headers: { "x-signature": hmacHex("sha256", V1_PLAIN, body) } })).status).toBe(200);

      const patched = await call(first, "PATCH", `/v1/sources/${s.id}`, { key, body: { verification_secret: "rotated-secret-value" } });
      expect(patched.status).toBe(200);
      const [row] = await first.deps.db.select({ v: sources.verificationSecret }).from(sources).where(eq(sources.id, s.id));
      expect(row!.v).toMatch(/^enc:v2:/);
      await first.stop();

      // Another process derives the same key.
      const second = await startTestServer(env, dataDir);
      const key2 = await second.apiKey();
      expect((await call(second, "GET", `/v1/sources/${s.id}/secret`, { key: key2 })).body).toEqual({ secret: "rotated-secret-value" });
      await second.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSource, ingest } from "../helpers/ingest";
import { waitFor } from "../helpers/delivery";
import { startTestServer, type TestServer } from "../helpers/server";

/**
 * `serve` checkpoints the WAL from a thread of its own (src/db/checkpointer.ts):
 * written pages reach the database file soon after they commit, long before
 * the 1000-page WAL that SQLite's automatic checkpoint waits for.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("WAL checkpoints in the background", () => {
  it("writes committed pages into the database file while the WAL is far below SQLite's own threshold", async () => {
    const key = await server.apiKey();
    const source = await createSource(server, key, { name: "checkpointed" });
    const dbFile = join(server.dataDir, "hookrelay.db");
    // In WAL mode only a checkpoint writes the database file. Let the checkpoint of the setup writes land first.
    const settled = await waitFor(async () => {
      const a = statSync(dbFile).mtimeMs;
      await Bun.sleep(500);
      return statSync(dbFile).mtimeMs === a && a;
    });
    // About 30 pages of new events, in a WAL of a few hundred frames: far from the 1000 SQLite would wait for.
    const body = JSON.stringify({ pad: "x".repeat(3500) });
    for (let i = 0; i < 30; i++) expect((await ingest(server, source.id, { body, headers: { "content-type": "application/json" } })).status).toBe(200);
    await waitFor(async () => statSync(dbFile).mtimeMs !== settled, { what: "a checkpoint to write the database file", timeoutMs: 5000 });
  });
});

import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createSource, ingest } from "../helpers/ingest";
import { call, startTestServer, tempDir } from "../helpers/server";

describe("ingest: every 200 is on disk (group commit, HOOKRELAY_SYNC=full)", () => {
  it("finds every acknowledged event after a restart on the same data dir", async () => {
    const dataDir = tempDir();
    try {
      const first = await startTestServer({ HOOKRELAY_SYNC: "full" }, dataDir);
      const key = await first.apiKey();
      const s = await createSource(first, key, { name: "durable", dedup_enabled: true });
      const results = await Promise.all(Array.from({ length: 300 }, (_, i) => ingest(first, s.id, { body: JSON.stringify({ i }) })));
      const acked = results.filter((r) => r.status === 200).map((r) => r.body.event_id as string);
      expect(acked).toHaveLength(300);
      await first.stop();

      const second = await startTestServer({}, dataDir);
      const key2 = await second.apiKey();
      const stored = new Set<string>();
      let cursor: string | null = null;
      do {
        const page: { body: { events: { id: string }[]; pagination: { next_cursor: string | null } } } = await call(second, "GET", `/v1/events?source_id=${s.id}&limit=100${cursor ? `&cursor=${cursor}` : ""}`, { key: key2 });
        for (const e of page.body.events) stored.add(e.id);
        cursor = page.body.pagination.next_cursor;
      } while (cursor);
      expect(acked.every((id) => stored.has(id))).toBe(true);
      expect((await call(second, "GET", `/v1/sources/${s.id}`, { key: key2 })).body.source.event_count).toBe(300);
      await second.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import { expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { events } from "../../src/db/schema";
import { describeOnly } from "../helpers/database";
import { createDestination, createSourceId, waitFor } from "../helpers/delivery";
import { insertEvent, scopeOf } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";

/**
 * A replay whose window reaches into the last seconds (docs/scaling.md, "Ordered readers": ordered
 * consumers never skip an event another node committed a moment later).
 */
describeOnly("postgres", "a replay up to now", "several nodes stamp received_at by their own clocks before their own commits; SQLite has one writer", () => {
  let server: TestServer;
  let key: string;
  let sink: Sink;
  useServer({ sink: true }, (s) => ({ server, key, sink } = s));

  it("replays an event another node commits after the replay started, stamped before its end", async () => {
    const scope = await scopeOf(server, key);
    const sourceId = await createSourceId(server, key);
    const destination_id = await createDestination(server, key, { url: `${sink.url}/late` });
    const from = new Date(Date.now() - 60_000).toISOString();
    const first = await insertEvent(server, scope, sourceId, { body: '{"n":1}' });
    const [stored] = await server.deps.db.select({ receivedAt: events.receivedAt }).from(events).where(eq(events.id, first));
    const to = new Date(Date.parse(stored!.receivedAt) + 2).toISOString();
    while (new Date().toISOString() <= to) await Bun.sleep(1);

    const started = await call(server, "POST", "/v1/replay", { key, body: { destination_id, source_id: sourceId, from, to } });
    expect(started.body).toMatchObject({ status: "running", total: 1 });
    // Node B stamped its event within the window, and commits only now that the replay runs.
    const late = await insertEvent(server, scope, sourceId, { body: '{"n":2}', receivedAt: new Date(Date.parse(stored!.receivedAt) + 1).toISOString() });

    const done = await waitFor(
      async () => {
        const res = await call(server, "GET", `/v1/replay/${started.body.job_id}`, { key });
        return res.body.status === "completed" ? res.body : null;
      },
      { timeoutMs: 15_000, what: "the replay" },
    );
    expect(done).toMatchObject({ total: 2, processed: 2, succeeded: 2 });
    expect(sink.requests.filter((r) => r.path === "/late").map((r) => r.headers["x-hookrelay-event-id"])).toEqual([first, late]);
  });
});

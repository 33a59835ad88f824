import { describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { waitFor } from "../helpers/delivery";
import type { TestServer } from "../helpers/server";
import type { Sink } from "../helpers/sink";
import { cli, modeEnvs, ok, refused, same } from "./helpers";

/** `hookrelay connections ordering <id> [--skip <key>]`, remote and local (docs/delivery.md, "Ordered delivery"). */
let server: TestServer;
let sink: Sink;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;

useServer({ sink: true }, (s) => {
  ({ server, sink } = s);
  ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key));
});

const both = (args: string[]) => Promise.all([cli([...args, "--json"], { env: remoteEnv }), cli([...args, "--json"], { env: localEnv })]);
const remote = (args: string[]) => cli([...args, "--json"], { env: remoteEnv });

describe("connections ordering", () => {
  it("creates an ordered connection, lists its blocked key the same in both modes, and skips it", async () => {
    sink.respond = (r) => new Response("x", { status: (JSON.parse(r.body) as { seq: string }).seq === "K1" ? 500 : 200 });
    const source = ok(await remote(["sources", "create", "--name", "ordered"])).source;
    const destination = ok(await remote(["destinations", "create", "--name", "o", "--url", `${sink.url}/o`, "--max-retries", "0"])).destination;
    const connection = ok(
      await remote(["connections", "create", "--name", "o", "--source-id", source.id, "--destination-id", destination.id, "--ordered", "--ordering-key", "body.k", "--on-dlq", "block"]),
    ).connection;
    expect(connection).toMatchObject({ ordered: true, ordering_key: "body.k", on_dlq: "block" });
    for (const seq of ["K1", "K2"]) {
      await fetch(`${server.url}/v1/ingest/${source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ k: "K", seq }) });
      await Bun.sleep(2);
    }
    await waitFor(async () => ok(await remote(["connections", "ordering", connection.id])).keys.some((k: { blocked: boolean }) => k.blocked), { what: "K blocked" });
    const listed = same(await both(["connections", "ordering", connection.id]));
    expect(listed.keys).toEqual([expect.objectContaining({ key: "K", waiting: 1, blocked: true })]);

    refused(await both(["connections", "ordering", connection.id, "--skip", "other"]), "conflict");
    const skipped = ok(await remote(["connections", "ordering", connection.id, "--skip", "K"]));
    expect(skipped).toEqual({ key: "K", skipped_attempt_id: listed.keys[0].head_attempt_id });
    await waitFor(async () => sink.requests.length === 2, { what: "K2 delivered" });
    expect(same(await both(["connections", "ordering", connection.id])).keys).toEqual([]);
  });
});

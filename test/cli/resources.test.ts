import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { tempDir, type TestServer } from "../helpers/server";
import { cli, modeEnvs, ok, same as expectSame } from "./helpers";

/**
 * Resource commands with --json, the same arguments in both modes: remote
 * (HOOKRELAY_URL + HOOKRELAY_API_KEY against a running server) and local
 * (HOOKRELAY_DATA_DIR on that server's own data dir, while it runs). What one
 * mode writes the other reads back identically.
 */
let server: TestServer;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;
let readOnlyEnv: Record<string, string>;
const files = tempDir("hookrelay-cli-files-");

useServer({}, (s) => {
  server = s.server;
  ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key));
});
beforeAll(async () => {
  readOnlyEnv = { ...remoteEnv, HOOKRELAY_API_KEY: await server.apiKey("read") };
});

const remote = (args: string[], stdin?: string) => cli([...args, "--json"], { env: remoteEnv, stdin });
const local = (args: string[], stdin?: string) => cli([...args, "--json"], { env: localEnv, stdin });
/** Runs the same command in both modes at once. */
const both = (args: string[]) => Promise.all([remote(args), local(args)]);

describe("sources, destinations, connections, events in both modes", () => {
  let sourceA: any;
  let sourceB: any;
  let destination: any;
  let connection: any;

  it("sources: create in one mode, read back the same object in the other", async () => {
    sourceA = ok(await remote(["sources", "create", "--name", "GitHub", "--template", "github", "--verification-secret", "gh-secret"])).source;
    expect(sourceA).toMatchObject({ name: "GitHub", template: "github", verification_type: "hmac-sha256" });
    expect(sourceA.ingest_url).toBe(`${server.deps.settings.baseUrl}/v1/ingest/${sourceA.id}`);

    // A full body from stdin, a flag on top of it.
    sourceB = ok(await local(["sources", "create", "--data", "-", "--name", "Shop"], JSON.stringify({ name: "ignored", dedup_enabled: true, dedup_strategy: "body_hash" }))).source;
    expect(sourceB).toMatchObject({ name: "Shop", dedup_enabled: 1, dedup_strategy: "body_hash" });

    expect(expectSame(await both(["sources", "get", sourceA.id])).source).toEqual(sourceA);
    expect(expectSame(await both(["sources", "get", sourceB.id.slice(4)])).source).toEqual(sourceB);
    const list = expectSame(await both(["sources", "list"]));
    expect(list.sources.map((s: { id: string }) => s.id)).toEqual([sourceB.id, sourceA.id]);
    expect(expectSame(await both(["sources", "templates"])).templates.map((t: { id: string }) => t.id)).toContain("stripe");
    expect(expectSame(await both(["sources", "secret", sourceA.id]))).toEqual({ secret: "gh-secret" });

    const updated = ok(await local(["sources", "update", sourceA.id, "--status", "paused", "--ip-allowlist", "10.0.0.0/8,192.0.2.7"])).source;
    expect(updated).toMatchObject({ status: "paused", ip_allowlist: JSON.stringify(["10.0.0.0/8", "192.0.2.7"]) });
    expect(ok(await remote(["sources", "get", sourceA.id])).source).toEqual(updated);
  });

  it("destinations: --data @file, flags, secret, update with null, list", async () => {
    const file = join(files, "destination.json");
    writeFileSync(file, JSON.stringify({ name: "API", url: "https://api.example.com/hooks", max_retries: 3, headers: { "x-team": "core" } }));
    destination = ok(await remote(["destinations", "create", "--data", `@${file}`, "--rate-limit-per-second", "5"])).destination;
    expect(destination).toMatchObject({ name: "API", max_retries: 3, rate_limit_per_second: 5, headers: JSON.stringify({ "x-team": "core" }) });

    expect(expectSame(await both(["destinations", "get", destination.id])).destination).toEqual(destination);
    const secret = expectSame(await both(["destinations", "secret", destination.id]));
    expect(secret.secret).toMatch(/^whsec_/);

    const updated = ok(await local(["destinations", "update", destination.id, "--rate-limit-per-second", "null", "--retry-strategy", "linear"])).destination;
    expect(updated).toMatchObject({ rate_limit_per_second: null, retry_strategy: "linear" });
    expect(expectSame(await both(["destinations", "list"])).destinations).toEqual([updated]);
  });

  it("connections: --filter-rules JSON and --transform-file, enable/disable flags", async () => {
    const transform = join(files, "slim.jsonata");
    writeFileSync(transform, '{"kind": type}');
    const rules = JSON.stringify([{ field: "body.type", operator: "eq", value: "order.created" }]);
    connection = ok(
      await local(["connections", "create", "--name", "orders", "--source-id", sourceB.id, "--destination-id", destination.id, "--filter-rules", rules, "--transform-file", transform, "--transform-enabled"]),
    ).connection;
    expect(connection).toMatchObject({ name: "orders", source_name: "Shop", destination_name: "API", transform_enabled: 1, transform_expression: '{"kind": type}', enabled: 1 });
    expect(JSON.parse(connection.filter_rules)).toEqual(JSON.parse(rules));

    const disabled = ok(await remote(["connections", "update", connection.id, "--no-enabled"])).connection;
    expect(disabled.enabled).toBe(0);
    expect(expectSame(await both(["connections", "get", connection.id])).connection).toEqual(disabled);
    expect(expectSame(await both(["connections", "list", "--source-id", sourceB.id])).connections).toEqual([disabled]);
    const preview = expectSame(await both(["connections", "test-transform", "--expression", '{"kind": type}', "--body", '{"type":"x"}']));
    expect(preview).toEqual({ result: { kind: "x" } });
  });

  it("events: list and get give the same JSON", async () => {
    const res = await fetch(sourceB.ingest_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type: "order.created", id: 1 }) });
    expect(res.status).toBe(200);
    const { event_id } = (await res.json()) as { event_id: string };
    const list = expectSame(await both(["events", "list", "--source-id", sourceB.id, "--limit", "10"]));
    expect(list.events.map((e: { id: string }) => e.id)).toEqual([event_id]);
    expect(list.pagination).toMatchObject({ total: 1, limit: 10, offset: 0, has_more: false });
    const detail = expectSame(await both(["events", "get", event_id]));
    expect(detail).toMatchObject({ id: event_id, body: JSON.stringify({ type: "order.created", id: 1 }), body_encoding: "utf8" });
  });

  it("delete in one mode is gone in the other; whoami names the same org", async () => {
    expect(ok(await local(["connections", "delete", connection.id, "--yes"]))).toEqual({ success: true });
    const gone = await remote(["connections", "get", connection.id]);
    expect(gone.code).toBe(1);
    expect(gone.errorJson().error.code).toBe("not_found");
    expect(ok(await remote(["destinations", "delete", destination.id]))).toEqual({ success: true });
    expect((await local(["destinations", "get", destination.id])).code).toBe(1);
    expect(ok(await local(["sources", "delete", sourceA.id, "--yes"]))).toEqual({ success: true });
    const [r, l] = await both(["whoami"]);
    expect(ok(r!).org_id).toBe(ok(l!).org_id);
    expect(ok(await remote(["sources", "list"])).sources.map((x: { id: string }) => x.id)).toEqual([sourceB.id]);
  });
});

describe("sources by id or slug everywhere", () => {
  it("get, update, secret, delete and every --source-id take the slug, in both modes", async () => {
    const src = ok(await remote(["sources", "create", "--name", "Slugged", "--template", "github", "--verification-secret", "slug-secret"])).source;
    expect(src.slug).toBe("slugged");
    const dst = ok(await remote(["destinations", "create", "--name", "slug-target", "--url", "https://example.com/hook"])).destination;

    expect(expectSame(await both(["sources", "get", "slugged"])).source.id).toBe(src.id);
    expect(ok(await local(["sources", "update", "slugged", "--description", "by slug"])).source).toMatchObject({ id: src.id, description: "by slug" });
    expect(expectSame(await both(["sources", "secret", "slugged"]))).toEqual({ secret: "slug-secret" });

    const conn = ok(await remote(["connections", "create", "--name", "by-slug", "--source-id", "slugged", "--destination-id", dst.id])).connection;
    expect(conn.source_id).toBe(src.id);
    expect(ok(await local(["connections", "update", conn.id, "--data", JSON.stringify({ source_id: "slugged" })])).connection.source_id).toBe(src.id);
    expect(expectSame(await both(["connections", "list", "--source-id", "slugged"])).connections.map((c: { id: string }) => c.id)).toEqual([conn.id]);
    const signature = "sha256=" + new Bun.CryptoHasher("sha256", "slug-secret").update("{}").digest("hex");
    expect((await fetch(src.ingest_url, { method: "POST", headers: { "x-hub-signature-256": signature }, body: "{}" })).status).toBe(200);
    expect(expectSame(await both(["events", "list", "--source-id", "slugged"])).events).toHaveLength(1);
    const replay = ok(await remote(["replay", "start", "--destination-id", dst.id, "--source-id", "slugged", "--from", "2000-01-01", "--to", new Date(Date.now() + 60_000).toISOString()]));
    expect(replay.total).toBe(1);

    const unknown = await remote(["events", "list", "--source-id", "no-such-source"]);
    expect(unknown.code).toBe(1);
    expect(unknown.errorJson().error.code).toBe("not_found");
    expect(ok(await local(["sources", "delete", "slugged", "--yes"]))).toEqual({ success: true });
    expect((await remote(["sources", "get", src.id])).code).toBe(1);
  });
});

describe("errors", () => {
  it("usage errors exit 2: missing required flags, nothing to update, bad JSON, bad number, bad choice", async () => {
    const cases: [string[], RegExp][] = [
      [["sources", "create"], /missing --name/],
      [["sources", "update", "src_x"], /nothing to update/],
      [["connections", "create", "--name", "x", "--source-id", "a", "--destination-id", "b", "--filter-rules", "[nope"], /--filter-rules must be JSON/],
      [["destinations", "create", "--name", "x", "--url", "https://x.example", "--timeout-ms", "soon"], /--timeout-ms must be a number/],
      [["sources", "list", "--status", "sleeping"], /Allowed choices are active, paused, disabled/],
      [["sources", "create", "--data", "[1]"], /--data must be a JSON object/],
      [["events", "list", "--limit", "ten"], /--limit must be a whole number/],
    ];
    const results = await Promise.all(cases.map(([args]) => local(args)));
    results.forEach((r, i) => {
      expect(r.code, cases[i]![0].join(" ")).toBe(2);
      expect(r.stderr).toMatch(cases[i]![1]);
      expect(r.stdout).toBe("");
      // --json: the usage error is one JSON line too.
      expect(r.errorJson().error.code).toBe("usage");
    });
  });

  it("API errors exit 1 with the error body on stderr in both modes; a read-only key exits 4", async () => {
    const [r, l] = await both(["destinations", "create", "--name", "x", "--url", "ftp://x.example"]);
    for (const res of [r!, l!]) {
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      expect(res.errorJson().error).toMatchObject({ code: "validation_error", details: [{ field: "body.url" }] });
    }
    expect(r!.errorJson()).toEqual(l!.errorJson());

    const denied = await cli(["sources", "create", "--name", "nope", "--json"], { env: readOnlyEnv });
    expect(denied.code).toBe(4);
    expect(denied.errorJson().error.code).toBe("forbidden");
  });
});

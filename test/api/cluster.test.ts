/**
 * GET /v1/cluster (docs/scaling.md, "Seeing the cluster"): the live serve nodes
 * sharing the database. A lone server lists itself, as the node that
 * answered and as the scheduler, on both stores; `hookrelay cluster` shows
 * the same; /metrics labels every series with the node's id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { hostname } from "node:os";
import { cli, cliEnv } from "../cli/helpers";
import { call, startTestServer, type TestServer } from "../helpers/server";

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.apiKey("read");
});
afterAll(() => server?.close());

describe("GET /v1/cluster", () => {
  it("lists the one running node as the node that answered and as the scheduler", async () => {
    const res = await call(server, "GET", "/v1/cluster", { key });
    expect(res.status).toBe(200);
    expect(res.body.nodes).toEqual([
      {
        id: server.deps.node.id,
        version: pkg.version,
        started_at: expect.any(String),
        last_heartbeat_at: expect.any(String),
        address: server.url,
        hostname: hostname(),
        pid: process.pid,
        self: true,
        scheduler: true,
      },
    ]);
    expect(server.deps.node.id).toMatch(/^node_[0-9a-f]{32}$/);
  });

  it("needs credentials", async () => {
    expect((await call(server, "GET", "/v1/cluster")).status).toBe(401);
  });

  it("is in the OpenAPI document", async () => {
    const doc = (await call(server, "GET", "/v1/openapi.json")).body;
    expect(doc.paths["/cluster"].get.responses["200"]).toBeDefined();
  });
});

describe("hookrelay cluster", () => {
  it("lists the nodes from a server (remote mode)", async () => {
    const res = await cli(["cluster", "--json"], { env: cliEnv({ HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key }) });
    expect(res.code).toBe(0);
    expect(res.json().nodes.map((n: { id: string; self: boolean; scheduler: boolean }) => [n.id, n.self, n.scheduler])).toEqual([[server.deps.node.id, true, true]]);
  });

  it("lists the same nodes from the database (local mode), as none of them", async () => {
    const res = await cli(["cluster", "--json", ...server.storeArgs], { env: cliEnv() });
    expect(res.code).toBe(0);
    expect(res.json().nodes.map((n: { id: string; self: boolean; scheduler: boolean }) => [n.id, n.self, n.scheduler])).toEqual([[server.deps.node.id, false, true]]);
  });
});

describe("/metrics", () => {
  it("labels every series with the node's id", async () => {
    const text = await (await server.request("/metrics")).text();
    const samples = text.split("\n").filter((l) => l.startsWith("hookrelay_"));
    expect(samples.length).toBeGreaterThan(0);
    for (const line of samples) expect(line).toContain(`node="${server.deps.node.id}"`);
  });
});

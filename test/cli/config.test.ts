import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { useServer } from "../helpers/fixture";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { cli, ensureBinary, modeEnvs, ok } from "./helpers";

/**
 * `hookrelay export` and `hookrelay apply` with the compiled binary, remote
 * and local (docs/config-as-code.md). Instance A is populated; instance B
 * starts empty and is made to match A's file.
 */
let a: TestServer, aKey: string;
useServer({}, (s) => ({ server: a, key: aKey } = s));

let b: TestServer;
let envs: { aRemote: Record<string, string>; aLocal: Record<string, string>; bRemote: Record<string, string>; bLocal: Record<string, string> };
const files = tempDir("hookrelay-relay-files-");
const file = (name: string) => join(files, name);
const HMAC = "whsec_" + Buffer.alloc(32, 9).toString("base64");

beforeAll(async () => {
  await ensureBinary();
  b = await startTestServer();
  const ea = modeEnvs(a, aKey);
  const eb = modeEnvs(b, await b.apiKey());
  envs = { aRemote: ea.remoteEnv, aLocal: ea.localEnv, bRemote: eb.remoteEnv, bLocal: eb.localEnv };
  const must = async (path: string, body: unknown) => {
    const res = await call(a, "POST", path, { key: aKey, body });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const source = (await must("/v1/sources", { name: "GitHub", slug: "github", template: "github", verification_secret: "gh-secret-0123456789" })).source;
  const api = (await must("/v1/destinations", { name: "api", url: "https://api.example.com/hooks", signing_secret: HMAC, headers: { "X-Team": "core" } })).destination;
  await must("/v1/destinations", { name: "billing", url: "https://billing.example.com/in", signing_secret: HMAC });
  await must("/v1/connections", { name: "github-to-api", source_id: source.id, destination_id: api.id, filter_rules: [{ field: "body.action", operator: "eq", value: "opened" }] });
});
afterAll(async () => {
  await b?.close();
});

const run = (args: string[], env: Record<string, string>, stdin?: string) => cli(args, { env, stdin, binary: true });
/** What each secret reference of A's export stands for, as an operator's CI would set them. */
const SECRETS = { SOURCE_GITHUB_SECRET: "gh-secret-0123456789", DESTINATION_API_SIGNING_SECRET: HMAC, DESTINATION_BILLING_SIGNING_SECRET: HMAC };

describe("hookrelay export", () => {
  it("writes YAML with every resource by name, the same bytes in both modes and twice", async () => {
    const [remote, local, again] = await Promise.all([run(["export"], envs.aRemote), run(["export"], envs.aLocal), run(["export"], envs.aRemote)]);
    expect(remote.code, remote.stderr).toBe(0);
    expect(local.stdout).toBe(remote.stdout);
    expect(again.stdout).toBe(remote.stdout);
    const doc = parse(remote.stdout);
    expect(doc.version).toBe(1);
    expect(doc.sources[0]).toMatchObject({ slug: "github", verification_secret: "${SOURCE_GITHUB_SECRET}" });
    expect(doc.connections[0]).toMatchObject({ name: "github-to-api", source: "github", destination: "api" });
  });

  it("writes JSON with --format json, to a file with -o", async () => {
    const r = await run(["export", "--format", "json", "-o", file("a.json")], envs.aRemote);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(JSON.parse(readFileSync(file("a.json"), "utf8")).destinations.map((d: { name: string }) => d.name)).toEqual(["api", "billing"]);
    expect((await run(["export", "--format", "toml"], envs.aRemote)).code).toBe(2);
  });
});

describe("hookrelay apply", () => {
  it("export → apply on an empty instance → export gives the same document", async () => {
    expect((await run(["export", "--include-secrets", "-o", file("a-secrets.yaml")], envs.aRemote)).code).toBe(0);
    const applied = await run(["apply", "-f", file("a-secrets.yaml")], envs.bLocal);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("+ source github");
    expect(applied.stdout).toContain("+ connection github-to-api");
    expect(applied.stdout).toContain("Applied 4 changes");
    const [fromA, fromB] = await Promise.all([run(["export", "--include-secrets"], envs.aRemote), run(["export", "--include-secrets"], envs.bRemote)]);
    expect(fromB.stdout).toBe(fromA.stdout);
  });

  it("applying the same file twice changes nothing: exit 0, no changes", async () => {
    const text = await run(["apply", "-f", file("a-secrets.yaml")], envs.bRemote);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe("No changes: everything the file names matches (what it does not name is left alone without --prune).\n");
    expect((await run(["apply", "-f", file("a-secrets.yaml"), "--prune"], envs.bRemote)).stdout).toBe("No changes: the environment matches the file.\n");
    expect(ok(await run(["apply", "-f", file("a-secrets.yaml"), "--json"], envs.bLocal))).toEqual({ changes: [], applied: false });
  });

  it("resolves secret references from the environment; a missing one is exit 2 naming its place, and nothing changes", async () => {
    expect((await run(["export", "-o", file("a-refs.yaml")], envs.aRemote)).code).toBe(0);
    const same = await run(["apply", "-f", file("a-refs.yaml"), "--dry-run", "--exit-code"], { ...envs.bRemote, ...SECRETS });
    expect(same.code, same.stderr + same.stdout).toBe(0);
    expect(same.stdout).toContain("No changes");

    const { SOURCE_GITHUB_SECRET: _, ...missing } = SECRETS;
    const refused = await run(["apply", "-f", file("a-refs.yaml")], { ...envs.bRemote, ...missing });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("sources[0].verification_secret: secret reference: environment variable SOURCE_GITHUB_SECRET is not set");

    // file: references: a mounted secret's content, its trailing newline dropped; never a device.
    writeFileSync(file("gh-secret"), "gh-secret-0123456789\n");
    writeFileSync(file("file-refs.yaml"), readFileSync(file("a-refs.yaml"), "utf8").replace("${SOURCE_GITHUB_SECRET}", `file:${file("gh-secret")}`));
    const fromFile = await run(["apply", "-f", file("file-refs.yaml"), "--dry-run", "--exit-code"], { ...envs.bRemote, ...missing });
    expect(fromFile.code, fromFile.stderr + fromFile.stdout).toBe(0);
    writeFileSync(file("device-refs.yaml"), readFileSync(file("a-refs.yaml"), "utf8").replace("${SOURCE_GITHUB_SECRET}", "file:/dev/zero"));
    const device = await run(["apply", "-f", file("device-refs.yaml")], { ...envs.bRemote, ...missing });
    expect(device.code).toBe(2);
    expect(device.stderr).toContain("sources[0].verification_secret: secret reference: file /dev/zero cannot be read");

    const rotated = await run(["apply", "-f", file("a-refs.yaml"), "--dry-run"], { ...envs.bRemote, ...SECRETS, SOURCE_GITHUB_SECRET: "rotated-secret-98765" });
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain("~ source github\n    verification_secret: (secret changed)");
    expect(rotated.stdout).not.toContain("rotated-secret");
  });

  it("--dry-run --exit-code exits 3 when changes are pending and changes nothing", async () => {
    const edited = readFileSync(file("a-secrets.yaml"), "utf8").replace("max_retries: 8", "max_retries: 5");
    writeFileSync(file("edited.yaml"), edited);
    const [remote, local] = await Promise.all([run(["apply", "-f", file("edited.yaml"), "--dry-run", "--exit-code"], envs.bRemote), run(["apply", "-f", file("edited.yaml"), "--dry-run", "--exit-code"], envs.bLocal)]);
    for (const r of [remote, local]) {
      expect(r.code, r.stderr).toBe(3);
      expect(r.stdout).toContain("~ destination api\n    max_retries: 8 → 5");
      expect(r.stdout).toContain("Plan: 0 to create, 1 to update, 0 to delete.");
    }
    expect((await run(["apply", "-f", file("edited.yaml"), "--dry-run"], envs.bRemote)).code).toBe(0);
    // Coloured where colour is wanted: ~ yellow for an update.
    const coloured = await run(["apply", "-f", file("edited.yaml"), "--dry-run"], { ...envs.bRemote, FORCE_COLOR: "1" });
    expect(coloured.stdout).toContain("\u001b[33m~ destination api\u001b[39m");
    const plan = ok(await run(["apply", "-f", file("edited.yaml"), "--dry-run", "--json"], envs.bRemote));
    expect(plan.applied).toBe(false);
    expect(plan.changes[0]).toEqual({ action: "update", kind: "destination", name: "api", fields: [{ field: "max_retries", before: 8, after: 5 }] });
    const destinations = (await call(b, "GET", "/v1/destinations", { key: await b.apiKey() })).body.destinations;
    expect(destinations.every((d: { max_retries: number }) => d.max_retries === 8)).toBe(true);
  });

  it("--prune deletes what the file no longer names; without it nothing is deleted", async () => {
    const doc = parse(readFileSync(file("a-secrets.yaml"), "utf8"));
    doc.destinations = doc.destinations.filter((d: { name: string }) => d.name !== "billing");
    writeFileSync(file("smaller.json"), JSON.stringify(doc));
    const kept = await run(["apply", "-f", file("smaller.json")], envs.bRemote);
    expect(kept.stdout).toContain("No changes");
    const pruned = await run(["apply", "-f", file("smaller.json"), "--prune"], envs.bLocal);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain("- destination billing");
    const names = (await call(b, "GET", "/v1/destinations", { key: await b.apiKey() })).body.destinations.map((d: { name: string }) => d.name);
    expect(names).toEqual(["api"]);
  });

  it("a bad file changes nothing: exit 2, each bad field named by its place in the file, in both modes", async () => {
    const bad = `version: 1
destinations:
  - name: api
    url: https://api.example.com/hooks
    timeout_ms: 5
connections:
  - name: x
    source: github
    destination: nowhere
`;
    for (const env of [envs.bRemote, envs.bLocal]) {
      const r = await run(["apply", "-f", "-"], env, bad);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("destinations[0].timeout_ms");
    }
    const badRef = bad.replace("    timeout_ms: 5\n", "");
    for (const env of [envs.bRemote, envs.bLocal]) {
      const r = await run(["apply", "-f", "-", "--prune"], env, badRef);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('connections[0].destination: unknown destination "nowhere"');
    }
    const syntax = await run(["apply", "-f", "-"], envs.bRemote, "version: 1\nsources: [\n");
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(/line \d+, column \d+/);
    expect((await call(b, "GET", "/v1/connections", { key: await b.apiKey() })).body.connections).toHaveLength(1);
  });
});

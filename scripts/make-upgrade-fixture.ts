/**
 * Makes test/fixtures/db/<version>.db: a small database made by this release,
 * for the upgrade test (test/ops/upgrade.test.ts), which starts every later
 * release's binary on a copy of it and checks that nothing was lost.
 *
 *   bun scripts/build.ts && bun scripts/make-upgrade-fixture.ts
 *
 * Run it once per release, on the release's own build, and commit both files it
 * writes: the database (checkpointed into one file) and <version>.json, what the
 * test expects to find (ids, the API key, the secrets in plain text). The
 * secrets are sealed with FIXTURE_SECRET_KEY, which the test passes as
 * HOOKRELAY_SECRET_KEY, as a restored backup would be opened on a new machine.
 */
import { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json";

export const FIXTURE_SECRET_KEY = "upgrade-fixture secret key: not for production";
const root = join(import.meta.dirname, "..");
const binary = join(root, "dist/hookrelay");
const outDir = join(root, "test/fixtures/db");

if (import.meta.main) await main();

async function main() {
  if (!existsSync(binary)) throw new Error("build the binary first: bun scripts/build.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "hookrelay-fixture-"));
  const env = { ...process.env, HOOKRELAY_SECRET_KEY: FIXTURE_SECRET_KEY, HOOKRELAY_ADMIN_PASSWORD: "fixture admin password" };
  const keyOut = Bun.spawnSync([binary, "keys", "create", "--name", "fixture", "--data-dir", dataDir, "--json"], { env });
  if (keyOut.exitCode !== 0) throw new Error(keyOut.stderr.toString());
  const apiKey = JSON.parse(keyOut.stdout.toString()).key as string;

  const proc = Bun.spawn([binary, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  try {
    const url = await listeningUrl(proc);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(url + "/v1" + path, { method, headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await res.json()) as any;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const verificationSecret = "fixture github secret";
    const signingSecret = "whsec_" + Buffer.from("fixture destination signing secret").toString("base64");
    const bearer = "fixture bearer token";
    const channelSecret = "fixture channel secret";
    const source = (await call("POST", "/sources", { name: "fixture github", template: "github", verification_secret: verificationSecret })).source;
    const destination = (
      await call("POST", "/destinations", { name: "fixture app", url: "http://127.0.0.1:9/hooks", signing_secret: signingSecret, auth_type: "bearer", auth_config: { token: bearer }, status: "paused" })
    ).destination;
    await call("POST", "/connections", { name: "fixture connection", source_id: source.id, destination_id: destination.id });
    const channel = await call("POST", "/notification-channels", { name: "fixture hook", channel_type: "webhook", config: { url: "http://127.0.0.1:9/alerts", secret: channelSecret } });
    const endpointSecret = "whsec_" + Buffer.from("fixture endpoint signing secret!").toString("base64");
    const application = (await call("POST", "/applications", { name: "Fixture customer", uid: "fixture-customer" })).application;
    const endpoint = (await call("POST", `/applications/${application.uid}/endpoints`, { url: "http://127.0.0.1:9/customer", secret: endpointSecret, status: "disabled" })).endpoint;

    const body = JSON.stringify({ action: "opened", fixture: pkg.version });
    const signature = "sha256=" + createHmac("sha256", verificationSecret).update(body).digest("hex");
    const ingest = await fetch(source.ingest_url, { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": signature, "x-github-delivery": "fixture-1" }, body });
    const event = (await ingest.json()) as { event_id: string };
    if (!ingest.ok) throw new Error(`ingest: ${ingest.status} ${JSON.stringify(event)}`);

    proc.kill("SIGTERM");
    await proc.exited;
    // One self-contained file: the WAL folded in.
    const db = new Database(join(dataDir, "hookrelay.db"));
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    mkdirSync(outDir, { recursive: true });
    copyFileSync(join(dataDir, "hookrelay.db"), join(outDir, `${pkg.version}.db`));
    const expected = {
      version: pkg.version,
      api_key: apiKey,
      source_id: source.id,
      verification_secret: verificationSecret,
      destination_id: destination.id,
      signing_secret: signingSecret,
      bearer_token: bearer,
      channel_id: channel.id,
      channel_secret: channelSecret,
      application_uid: application.uid,
      endpoint_id: endpoint.id,
      endpoint_secret: endpointSecret,
      event_id: event.event_id,
      event_body: body,
    };
    writeFileSync(join(outDir, `${pkg.version}.json`), JSON.stringify(expected, null, 2) + "\n");
    console.log(`wrote test/fixtures/db/${pkg.version}.db and .json`);
  } finally {
    proc.kill("SIGKILL");
  }
}

async function listeningUrl(proc: Bun.Subprocess<"ignore", "pipe", "pipe">): Promise<string> {
  // Read stderr to its end (a closed pipe would fail the server's next log line), and watch for the URL.
  let out = "";
  const decoder = new TextDecoder();
  const ended = (async () => {
    for await (const chunk of proc.stderr) out += decoder.decode(chunk, { stream: true });
  })();
  void new Response(proc.stdout).arrayBuffer();
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    if (url) return url;
    if (await Promise.race([ended.then(() => true), Bun.sleep(20).then(() => false)])) throw new Error(`serve exited before listening:\n${out}`);
  }
}

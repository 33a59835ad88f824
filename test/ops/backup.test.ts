import { migrations } from "../../src/generated/migrations.gen";
import { Database } from "bun:sqlite";
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock";
import { runScheduledBackup } from "../../src/domain/backups";
import { cli, cliEnv } from "../cli/helpers";
import { waitFor } from "../helpers/delivery";
import { createSource, ingest } from "../helpers/ingest";
import { call, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { adminKey, api, spawnServe } from "./helpers";
import { describeOnly } from "../helpers/database";
import { useServer } from "../helpers/fixture";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const newDir = (prefix = "hookrelay-backup-") => {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
};

function openCopy(file: string) {
  return new Database(file, { readonly: true });
}

describeOnly("sqlite", "POST /v1/backups while ingest runs", "these copy the SQLite file with VACUUM INTO; PostgreSQL's portable backups are test/ops/backup-portable.test.ts", () => {
  let server: TestServer;
  let key: string;
  useServer({}, (s) => ({ server, key } = s));

  it("holds every event acknowledged before it started, passes integrity_check, and ingest goes on meanwhile", async () => {
    const source = await createSource(server, key, { name: "busy" });
    // Some bulk, so that the copy takes a while.
    const bulk = JSON.stringify({ pad: "x".repeat(48 * 1024) });
    for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 20 }, () => ingest(server, source.id, { body: bulk })));

    const acked: { id: string; at: number }[] = [];
    let running = true;
    const senders = Array.from({ length: 4 }, async (_, n) => {
      for (let i = 0; running; i++) {
        const res = await ingest(server, source.id, { body: JSON.stringify({ n, i }) });
        expect(res.status).toBe(200);
        acked.push({ id: res.body.event_id, at: performance.now() });
      }
    });
    await waitFor(async () => acked.length >= 20, { what: "ingest under way" });

    const started = performance.now();
    const before = acked.filter((a) => a.at < started).map((a) => a.id);
    const res = await call(server, "POST", "/v1/backups", { key });
    const ended = performance.now();
    // Let ingest run on a little after the backup, then stop it.
    await waitFor(async () => acked.some((a) => a.at > ended), { what: "ingest after the backup" });
    running = false;
    await Promise.all(senders);

    expect(res.status).toBe(201);
    expect(res.body.backup).toMatchObject({ kind: "manual", name: expect.stringMatching(/^hookrelay-.*\.db$/) });
    // The answer names no server path (docs/api.md): the backup lies in <data-dir>/backups under its name.
    expect(res.body.backup.path).toBeUndefined();
    const copy = openCopy(join(server.dataDir, "backups", res.body.backup.name));
    try {
      expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      const ids = new Set((copy.query("select id from events").all() as { id: string }[]).map((r) => r.id));
      const missing = before.filter((id) => !ids.has(id));
      expect(missing).toEqual([]);
      expect(before.length).toBeGreaterThanOrEqual(20);
      expect(ids.size).toBeGreaterThan(400 + before.length);
    } finally {
      copy.close();
    }
    // Requests were answered while the copy was being made.
    expect(acked.filter((a) => a.at > started && a.at < ended).length).toBeGreaterThan(0);
  });
});

describeOnly("sqlite", "the backups API", "these copy the SQLite file with VACUUM INTO; PostgreSQL's portable backups are test/ops/backup-portable.test.ts", () => {
  let server: TestServer;
  let key: string;
  useServer({}, (s) => ({ server, key } = s));

  it("needs a key with scope * (or a session) to make, list or download", async () => {
    const read = await server.apiKey("read");
    expect((await call(server, "POST", "/v1/backups")).status).toBe(401);
    expect((await call(server, "POST", "/v1/backups", { key: read })).status).toBe(403);
    const list = await call(server, "GET", "/v1/backups", { key: read });
    expect(list.status).toBe(403);
    expect(list.body.error.code).toBe("forbidden");
    const made = await call(server, "POST", "/v1/backups", { key });
    expect(made.status).toBe(201);
    expect((await call(server, "GET", `/v1/backups/${made.body.backup.name}`, { key: read })).status).toBe(403);
    const session = await server.session();
    expect((await call(server, "GET", "/v1/backups", { headers: session })).status).toBe(200);
  });

  it("lists backups newest first and downloads one byte for byte; other names are 404", async () => {
    const first = (await call(server, "POST", "/v1/backups", { key })).body.backup;
    const second = (await call(server, "POST", "/v1/backups", { key })).body.backup;
    const list = await call(server, "GET", "/v1/backups", { key });
    expect(list.status).toBe(200);
    const names = list.body.backups.map((b: { name: string }) => b.name);
    expect(names.indexOf(second.name)).toBeLessThan(names.indexOf(first.name));
    expect(list.body.backups.find((b: { name: string }) => b.name === first.name)).toEqual(first);

    const res = await server.request(`/v1/backups/${first.name}`, { headers: { "x-api-key": key } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(server.dataDir, "backups", first.name)))).toBe(true);

    for (const name of ["hookrelay.db", "..%2Fhookrelay.db", "hookrelay-2020-01-01T00-00-00-000Z.db"]) {
      expect((await call(server, "GET", `/v1/backups/${name}`, { key })).status).toBe(404);
    }
  });
});

describeOnly("sqlite", "hookrelay backup create", "these copy the SQLite file with VACUUM INTO; PostgreSQL's portable backups are test/ops/backup-portable.test.ts", () => {
  let server: TestServer;
  let key: string;
  useServer({}, (s) => ({ server, key } = s));

  it("works in local mode beside the running server (--out) and downloads in remote mode (--out), reminding of the secret key", async () => {
    const out = join(newDir(), "local.db");
    const local = await cli(["backup", "create", "--data-dir", server.dataDir, "--out", out, "--json"], { env: cliEnv() });
    expect(local.code, local.stderr).toBe(0);
    expect(local.json().backup).toMatchObject({ path: out, kind: "manual" });
    expect(openCopy(out).query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });

    const downloaded = join(newDir(), "remote.db");
    const remote = await cli(["backup", "create", "--url", server.url, "--api-key", key, "--out", downloaded], { env: cliEnv() });
    expect(remote.code, remote.stderr).toBe(0);
    expect(remote.stdout).toContain(`Backup written to ${downloaded}`);
    expect(remote.stderr).toContain("Keep the secret key with your backups: secret.key in the server's data dir");
    expect(remote.stdout + remote.stderr).not.toContain(server.dataDir);
    expect(openCopy(downloaded).query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });

    const again = await cli(["backup", "create", "--data-dir", server.dataDir, "--out", out], { env: cliEnv() });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already exists");

    const list = await cli(["backup", "list", "--url", server.url, "--api-key", key, "--json"], { env: cliEnv() });
    expect(list.json().backups).toHaveLength(1);
  });
});

describeOnly("sqlite", "hookrelay backup restore", "these copy the SQLite file with VACUUM INTO; PostgreSQL's portable backups are test/ops/backup-portable.test.ts", () => {
  it("is refused while a server holds the data dir, and for a backup made by a newer schema", async () => {
    const server = await startTestServer({}, newDir());
    try {
      const key = await server.apiKey();
      const backup = (await call(server, "POST", "/v1/backups", { key })).body.backup;
      backup.path = join(server.dataDir, "backups", backup.name);
      const held = await cli(["backup", "restore", backup.path, "--data-dir", server.dataDir], { env: cliEnv() });
      expect(held.code).toBe(1);
      expect(held.stderr).toMatch(new RegExp(`^error \\(conflict\\): hookrelay serve \\(PID ${process.pid}\\) is running on data dir .*: stop it first, then restore`));
      expect(readdirSync(server.dataDir).filter((f) => f.includes("replaced"))).toEqual([]);

      // As if a later release had added a migration.
      const newer = join(newDir(), "newer.db");
      copyFileSync(backup.path, newer);
      const db = new Database(newer);
      db.query("insert into __drizzle_migrations (hash, created_at) values ('f'||hex(randomblob(31)), ?)").run(Date.now() + 86_400_000 * 365);
      db.close();
      const target = newDir();
      const refused = await cli(["backup", "restore", newer, "--data-dir", target, "--json"], { env: cliEnv() });
      expect(refused.code).toBe(1);
      expect(refused.errorJson().error).toMatchObject({ code: "conflict", message: expect.stringContaining(`was made by a newer hookrelay (schema ${migrations.length + 1}`) });
      expect(existsSync(join(target, "hookrelay.db"))).toBe(false);

      const junk = join(newDir(), "junk.db");
      writeFileSync(junk, "not a database");
      const bad = await cli(["backup", "restore", junk, "--data-dir", target], { env: cliEnv() });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("is not a sound SQLite database");

      const remote = await cli(["backup", "restore", backup.path, "--url", server.url, "--api-key", key], { env: cliEnv() });
      expect(remote.code).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("puts the backup in place once the server is stopped, keeping the replaced database aside", async () => {
    // A server process of its own: stopped, it lets go of the database as a real one does.
    const dataDir = newDir();
    const first = await spawnServe(dataDir);
    const key = await adminKey(first.url);
    const source = (await api(first.url, key, "POST", "/v1/sources", { name: "restored" })).body.source;
    const send = async (body: string) => (await fetch(`${first.url}/v1/ingest/${source.id}`, { method: "POST", body })).json() as Promise<{ event_id: string }>;
    const kept = (await send('{"before":1}')).event_id;
    const backup = (await api(first.url, key, "POST", "/v1/backups")).body.backup;
    backup.path = join(dataDir, "backups", backup.name);
    const lost = (await send('{"after":1}')).event_id;
    expect(await first.stop()).toBe(0);
    // Copied around by hand, as backups are: the restored database is private all the same (docs/operations.md "File modes").
    chmodSync(backup.path, 0o644);

    const r = await cli(["backup", "restore", backup.path, "--data-dir", dataDir, "--json"], { env: cliEnv() });
    expect(r.code, r.stderr).toBe(0);
    expect((statSync(join(dataDir, "hookrelay.db")).mode & 0o777).toString(8)).toBe("600");
    const res = r.json();
    expect(res).toMatchObject({ restored_from: backup.path, database: join(dataDir, "hookrelay.db"), schema: expect.stringMatching(new RegExp(`^${migrations.length} \\(`)) });
    expect(res.replaced_database_kept_as).toMatch(/hookrelay\.db\.replaced-/);
    const aside = new Database(res.replaced_database_kept_as, { readonly: true });
    expect(aside.query("select count(*) as n from events where id = ?").get(lost)).toEqual({ n: 1 });
    aside.close();

    const second = await spawnServe(dataDir);
    try {
      expect((await api(second.url, key, "GET", `/v1/events/${kept}`)).status).toBe(200);
      expect((await api(second.url, key, "GET", `/v1/events/${lost}`)).status).toBe(404);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  it("on another machine, decrypts every secret with the same HOOKRELAY_SECRET_KEY, or with the data dir's key file", async () => {
    for (const keying of ["env", "file"] as const) {
      const env: Record<string, string> = keying === "env" ? { HOOKRELAY_SECRET_KEY: "the same key on both machines" } : {};
      const origin = await startTestServer(env, newDir());
      const key = await origin.apiKey();
      const signing = "whsec_" + Buffer.from("restored-signing-secret-0123456789").toString("base64");
      const dest = await call(origin, "POST", "/v1/destinations", { key, body: { name: "d", url: "http://127.0.0.1:9/x", signing_secret: signing } });
      expect(dest.status).toBe(201);
      const source = await createSource(origin, key, { name: "s", template: "github", verification_secret: "verify-me" });
      const backup = (await call(origin, "POST", "/v1/backups", { key })).body.backup;
      backup.path = join(origin.dataDir, "backups", backup.name);

      const elsewhere = newDir("hookrelay-elsewhere-");
      const r = await cli(["backup", "restore", backup.path, "--data-dir", elsewhere], { env: cliEnv() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("start the server with the secret key the backup was made with");
      if (keying === "file") copyFileSync(join(origin.dataDir, "secret.key"), join(elsewhere, "secret.key"));
      await origin.close();

      const restored = await startTestServer(env, elsewhere);
      try {
        const secret = await call(restored, "GET", `/v1/destinations/${dest.body.destination.id}/secret`, { key });
        expect(secret.status, keying).toBe(200);
        expect(secret.body.secret).toBe(signing);
        const src = await call(restored, "GET", `/v1/sources/${source.id}/secret`, { key });
        expect(src.body).toEqual({ secret: "verify-me" });
      } finally {
        await restored.close();
      }
    }
  });
});

describeOnly("sqlite", "scheduled backups (HOOKRELAY_BACKUP_INTERVAL, HOOKRELAY_BACKUP_KEEP)", "these copy the SQLite file with VACUUM INTO; PostgreSQL's portable backups are test/ops/backup-portable.test.ts", () => {
  const clock = manualClock(new Date("2026-03-01T00:00:00.000Z"));
  let server: TestServer;
  let key: string;
  useServer({ clock, env: { HOOKRELAY_BACKUP_INTERVAL: "1h", HOOKRELAY_BACKUP_KEEP: "2" } }, (s) => ({ server, key } = s));

  const scheduled = async () => ((await call(server, "GET", "/v1/backups", { key })).body.backups as { kind: string; created_at: string }[]).filter((b) => b.kind === "scheduled").map((b) => b.created_at);

  it("takes one when none exists, then one each interval by the clock, keeping the newest KEEP and every manual one", async () => {
    expect(await waitFor(async () => ((await scheduled()).length === 1 ? await scheduled() : null), { what: "the first scheduled backup" })).toEqual(["2026-03-01T00:00:00.000Z"]);
    const manual = (await call(server, "POST", "/v1/backups", { key })).body.backup;

    // Not due before the interval has passed (the schedule's own step, asked directly).
    clock.advance(59 * 60_000);
    expect(await runScheduledBackup(server.deps, { intervalMs: 3600_000, keep: 2 })).toBeNull();

    clock.advance(60_000);
    await waitFor(async () => ((await scheduled()).length === 2 ? true : null), { what: "the second scheduled backup" });
    clock.advance(3600_000);
    const kept = await waitFor(async () => {
      const list = await scheduled();
      return list[0] === "2026-03-01T02:00:00.000Z" ? list : null;
    }, { what: "the third scheduled backup" });
    expect(kept).toEqual(["2026-03-01T02:00:00.000Z", "2026-03-01T01:00:00.000Z"]);
    const all = (await call(server, "GET", "/v1/backups", { key })).body.backups.map((b: { name: string }) => b.name);
    expect(all).toContain(manual.name);
  });
});

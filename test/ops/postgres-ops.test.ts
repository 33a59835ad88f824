import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { loadConfig } from "../../src/config/config";
import { createBus } from "../../src/live/bus";
import { createLogger } from "../../src/observability/logger";
import { createMetrics } from "../../src/observability/metrics";
import { createDeps } from "../../src/boot/deps";
import { cli, cliEnv, ensureBinary } from "../cli/helpers";
import { tempDir } from "../helpers/server";
import { pgUnavailable, startPgCluster, type PgCluster } from "../helpers/postgres";

/** Running on PostgreSQL, as an operator meets it: start-up errors, readiness, backups, config print. */
const unavailable = pgUnavailable();
if (unavailable) console.warn(`postgres-ops.test.ts: skipped: ${unavailable}`);

const SECRET_KEY = "a".repeat(64);

describe.skipIf(unavailable !== null)("hookrelay on PostgreSQL, for the operator (PostgreSQL)", () => {
  let cluster: PgCluster;
  beforeAll(async () => {
    await ensureBinary();
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());

  /** serve and a local-mode command, from the compiled binary, each must fail with this one line and exit 1. */
  async function bothRefuse(args: string[], env: Record<string, string>, line: RegExp, serveArgs: string[] = []) {
    const dataDir = tempDir("hookrelay-pg-ops-");
    const serve = await cli(["serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, ...serveArgs, ...args], { env: cliEnv(env), binary: true });
    const local = await cli(["sources", "list", ...args], { env: cliEnv(env), binary: true });
    for (const run of [serve, local]) {
      expect(run.code).toBe(1);
      const lines = run.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(line);
    }
  }

  it("without HOOKRELAY_SECRET_KEY, a database URL is refused in one line", async () => {
    // Empty: the suite's own key (cliEnv, on PostgreSQL runs) must not stand in for the missing one.
    await bothRefuse(["--database-url", cluster.url], { HOOKRELAY_SECRET_KEY: "" }, /^error.*: HOOKRELAY_SECRET_KEY is required with a database URL/);
  });

  it("a server that cannot be reached is one line (serve once its --database-wait is over; it logs each try meanwhile)", async () => {
    await bothRefuse(["--database-url", "postgres://hookrelay@127.0.0.1:1/hookrelay"], { HOOKRELAY_SECRET_KEY: SECRET_KEY }, /^error.*: cannot reach PostgreSQL at 127\.0\.0\.1:1\/hookrelay/, ["--database-wait", "1s"]);
  });

  it("a database that does not exist is one line", async () => {
    const url = cluster.url.replace(/\/hookrelay$/, "/no_such_db");
    await bothRefuse(["--database-url", url], { HOOKRELAY_SECRET_KEY: SECRET_KEY }, /^error.*: PostgreSQL at 127\.0\.0\.1:\d+\/no_such_db: database "no_such_db" does not exist$/);
  });

  it("a malformed database URL is one line, from the flag or the variable", async () => {
    await bothRefuse(["--database-url", "postgres://user:pw@host:notaport/db"], { HOOKRELAY_SECRET_KEY: SECRET_KEY }, /^error.*: database URL must look like postgres:\/\/user:password@host:5432\/database$/);
    await bothRefuse([], { HOOKRELAY_SECRET_KEY: SECRET_KEY, HOOKRELAY_DATABASE_URL: "mysql://u@h/db" }, /^error.*: database URL must start with postgres:\/\//);
  });

  it("--database-url is local mode: with --url it is a usage error", async () => {
    const run = await cli(["sources", "list", "--database-url", cluster.url, "--url", "http://127.0.0.1:1"], { env: cliEnv({ HOOKRELAY_SECRET_KEY: SECRET_KEY }), binary: true });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/choose one mode/);
  });

  it("backup restore of a SQLite copy into PostgreSQL says to restore it into a data dir and migrate, in one line, exit 1", async () => {
    const copy = join(tempDir("hookrelay-pg-restore-"), "hookrelay.db");
    writeFileSync(copy, "SQLite format 3\0");
    const run = await cli(["backup", "restore", copy, "--database-url", cluster.url], { env: cliEnv({ HOOKRELAY_SECRET_KEY: SECRET_KEY }), binary: true });
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/^error \(conflict\): this backup is a copy of a SQLite file: restore it into a data dir \(--data-dir\), then move it with `hookrelay migrate/)]);
  });

  it("config print shows the database URL without its password", async () => {
    const run = await cli(["config", "print", "--json"], { env: cliEnv({ HOOKRELAY_DATABASE_URL: "postgres://alice:s3cret@db.example:5432/hookrelay" }), binary: true });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("s3cret");
    expect(run.json().config.databaseUrl).toMatchObject({ value: "postgres://alice:[redacted]@db.example:5432/hookrelay", source: "env", redacted: true });
  });

  it("/readyz reports the database: ok while it answers, 503 with database unavailable once the cluster stops", async () => {
    const own = await startPgCluster();
    const config = loadConfig({ databaseUrl: own.url, secretKey: SECRET_KEY, dataDir: tempDir("hookrelay-pg-readyz-") }, {});
    const { deps, store } = await createDeps(config, { bus: createBus() });
    try {
      const app = createApp({ deps, logger: createLogger({ level: "error", format: "json", out: () => {} }), metrics: createMetrics(), pingDatabase: () => store.ping() });
      const before = await app.request("/readyz");
      expect(before.status).toBe(200);
      expect(await before.json()).toMatchObject({ status: "ok", database: "ok" });

      own.stop();
      const after = await app.request("/readyz");
      expect(after.status).toBe(503);
      expect(await after.json()).toMatchObject({ status: "unavailable", database: "unavailable" });
    } finally {
      own.stop();
      await store.close().catch(() => {});
    }
  });
});

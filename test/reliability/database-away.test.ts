import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config";
import { createLogger } from "../../src/observability/logger";
import { startServer, type RunningServer } from "../../src/server";
import { pgUnavailable, startPgCluster, type PgCluster } from "../helpers/postgres";
import { tempDir } from "../helpers/server";

/**
 * PostgreSQL going away under a running server, and not being there yet when
 * serve starts (docs/postgres.md). Each test stops and starts a throwaway
 * cluster of its own, so it runs in both store runs (PostgreSQL by nature).
 */
const cannot = pgUnavailable();
const describePg = cannot ? describe.skip : describe;
const title = (t: string) => (cannot ? `${t} (skipped: ${cannot})` : t);

interface Line {
  level: string;
  msg: string;
  [k: string]: unknown;
}

function capture() {
  const lines: Line[] = [];
  const raw: string[] = [];
  const logger = createLogger({
    level: "debug",
    format: "json",
    out: (line) => {
      raw.push(line);
      lines.push(JSON.parse(line) as Line);
    },
  });
  return { logger, lines, raw };
}

function configFor(url: string, extra: Record<string, string> = {}) {
  return loadConfig({}, {
    HOOKRELAY_PORT: "0",
    HOOKRELAY_HOST: "127.0.0.1",
    HOOKRELAY_DATA_DIR: tempDir(),
    HOOKRELAY_DATABASE_URL: url,
    HOOKRELAY_SECRET_KEY: "database-away test secret key",
    HOOKRELAY_ADMIN_EMAIL: "admin@test.local",
    HOOKRELAY_ADMIN_PASSWORD: "correct horse battery staple",
    HOOKRELAY_SHUTDOWN_TIMEOUT_MS: "2000",
    ...extra,
  });
}

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, deadlineMs = 60_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function apiKey(server: RunningServer) {
  const login = await fetch(`${server.url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@test.local", password: "correct horse battery staple" }) });
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const res = await fetch(`${server.url}/v1/auth/api-keys`, { method: "POST", headers: { cookie, origin: server.url, "content-type": "application/json" }, body: JSON.stringify({ name: "t" }) });
  return ((await res.json()) as { key: string }).key;
}

describePg(title("a running server whose PostgreSQL goes away"), () => {
  let pg: PgCluster;
  let server: RunningServer;
  let log: ReturnType<typeof capture>;
  let key: string;
  let sourceId: string;
  beforeAll(async () => {
    pg = await startPgCluster();
    log = capture();
    server = await startServer(configFor(pg.url), { logger: log.logger });
    key = await apiKey(server);
    const res = await fetch(`${server.url}/v1/sources`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ name: "away" }) });
    sourceId = ((await res.json()) as { source: { id: string } }).source.id;
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    pg?.stop();
  });

  const get = () => fetch(`${server.url}/v1/sources`, { headers: { "x-api-key": key } });
  const ingest = (body: string) => fetch(`${server.url}/v1/ingest/${sourceId}`, { method: "POST", headers: { "content-type": "application/json" }, body });

  it("answers 503 unavailable with Retry-After on the API and at ingest, logs one warning without SQL, and one line when it is back", async () => {
    pg.halt();
    for (const call of [get, () => ingest('{"while":"away"}'), get, () => ingest('{"while":"away again"}')]) {
      const res = await call();
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("unavailable");
      expect(body.error.message).not.toMatch(/select|insert|from /i);
    }
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);

    const linesWhileAway = log.raw.length;
    pg.resume();
    await until("the API answering again", async () => (await get()).status === 200);
    await until("the line saying the database is back", () => log.lines.some((l) => l.msg === "database available again"));
    const ok = await ingest('{"after":"back"}');
    expect(ok.status).toBe(200);

    const away = log.lines.filter((l) => l.msg.startsWith("database unavailable"));
    expect(away).toHaveLength(1);
    expect(away[0]!.level).toBe("warn");
    expect(String(away[0]!.error)).toMatch(/SQLSTATE|ERR_POSTGRES/);
    expect(log.lines.filter((l) => l.msg === "database available again")).toHaveLength(1);
    // No request's failure was logged as an unhandled error, and no line above debug carries a statement
    // (background work failing meanwhile says so at debug: the one warning above is the news).
    expect(log.lines.filter((l) => l.msg === "unhandled error")).toEqual([]);
    expect(log.raw.slice(0, linesWhileAway).filter((l) => !l.includes('"level":"debug"') && /Failed query|select .* from|insert into/i.test(l))).toEqual([]);

    // Only the event sent after the database came back was stored: a 503 stored nothing.
    const events = await fetch(`${server.url}/v1/events?source_id=${sourceId}`, { headers: { "x-api-key": key } });
    const list = ((await events.json()) as { events: { id: string }[] }).events;
    expect(list).toHaveLength(1);
  }, 120_000);

  it("turns the driver's own console lines (bun:sql LISTEN … failed) into JSON log lines", () => {
    const before = log.lines.length;
    console.warn('bun:sql LISTEN "hookrelay_bus" failed, retrying: Connection closed');
    const line = log.lines.slice(before).find((l) => l.msg === "database driver");
    expect(line).toMatchObject({ level: "warn", driver: 'bun:sql LISTEN "hookrelay_bus" failed, retrying: Connection closed' });
  });
});

describePg(title("serve started before its PostgreSQL is reachable"), () => {
  it("tries again with backoff, logging each try, and starts once the database answers", async () => {
    const pg = await startPgCluster({ started: false });
    const log = capture();
    const starting = startServer(configFor(pg.url), { logger: log.logger });
    let server: RunningServer | undefined;
    try {
      const tries = () => log.lines.filter((l) => l.msg === "database not reachable yet; trying again");
      await until("two logged tries", () => tries().length >= 2);
      expect(tries()[0]).toMatchObject({ level: "warn", attempt: 1, retry_in_ms: 500 });
      expect(String(tries()[0]!.error)).toContain(`127.0.0.1:${pg.port}`);
      expect(tries()[1]!.retry_in_ms).toBe(1000);

      pg.resume();
      server = await starting;
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect(log.lines.some((l) => l.msg === "database reachable; starting")).toBe(true);
    } finally {
      await (server ?? (await starting.catch(() => undefined)))?.stop();
      pg.stop();
    }
  }, 120_000);

  it("gives up at once on what waiting cannot mend, and after HOOKRELAY_DATABASE_WAIT otherwise", async () => {
    const pg = await startPgCluster({ started: false });
    try {
      const log = capture();
      const started = Date.now();
      await expect(startServer(configFor(pg.url, { HOOKRELAY_DATABASE_WAIT: "2s" }), { logger: log.logger })).rejects.toThrow(/cannot reach PostgreSQL/);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(log.lines.filter((l) => l.msg === "database not reachable yet; trying again").length).toBeGreaterThanOrEqual(1);

      pg.resume();
      const wrongDb = pg.url.replace(/\/hookrelay$/, "/no_such_database");
      const log2 = capture();
      await expect(startServer(configFor(wrongDb), { logger: log2.logger })).rejects.toThrow(/no_such_database/);
      expect(log2.lines.filter((l) => l.msg === "database not reachable yet; trying again")).toEqual([]);
    } finally {
      pg.stop();
    }
  }, 120_000);
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import type { TestProject } from "vitest/node";
import { openStore } from "../src/db/openStore";
import { TEMPLATE_DATABASE, testStoreFromEnv } from "./helpers/testStore";
import { pgUnavailable, startPgCluster, TEST_RUN_SETTINGS, type PgCluster } from "./helpers/postgres";

/**
 * On a PostgreSQL run (HOOKRELAY_TEST_DATABASE=postgres): one throwaway
 * cluster for the whole run, with a database migrated once through
 * openStore (the embedded migrations) that every test database is cloned
 * from (CREATE DATABASE … TEMPLATE takes tens of milliseconds; migrating
 * each one would take far longer). The cluster goes away at the end of the
 * run, on failure, and on Ctrl-C. A machine that cannot start PostgreSQL
 * fails the run with the reason: never a silent pass.
 */
export default async function setup(project: TestProject) {
  if (testStoreFromEnv(process.env) !== "postgres") return;
  const unavailable = pgUnavailable();
  if (unavailable) throw new Error(`HOOKRELAY_TEST_DATABASE=postgres, but PostgreSQL cannot be started here: ${unavailable} (scripts/test-prereqs.sh installs it when run as root)`);

  const started = Date.now();
  const cluster = await startPgCluster({ settings: TEST_RUN_SETTINGS });
  const stopOnce = onExit(cluster);
  try {
    const admin = new SQL({ url: cluster.url, max: 1 });
    await admin.unsafe(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
    const dataDir = mkdtempSync(join(tmpdir(), "hookrelay-template-"));
    const templateUrl = new URL(cluster.url);
    templateUrl.pathname = `/${TEMPLATE_DATABASE}`;
    const store = await openStore({ dataDir, databaseUrl: templateUrl.toString() });
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
    await admin.close();
  } catch (error) {
    stopOnce();
    throw error;
  }
  process.stderr.write(`PostgreSQL test cluster at ${cluster.url} (migrated template ready in ${Date.now() - started} ms)\n`);
  project.provide("pgAdminUrl", cluster.url);
  return stopOnce;
}

/** Stops the cluster once: at teardown, or when the run is interrupted or dies before it. */
function onExit(cluster: PgCluster): () => void {
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", stop);
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.off(signal, onSignal);
    try {
      cluster.stop();
    } catch (error) {
      process.stderr.write(`could not stop the PostgreSQL test cluster: ${error}\n`);
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    stop();
    process.kill(process.pid, signal);
  };
  process.on("exit", stop);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, onSignal);
  return stop;
}

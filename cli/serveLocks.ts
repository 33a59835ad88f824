import { existsSync } from "node:fs";
import type { StoreLocation } from "../src/domain/storeLocation";
import { CliError, EXIT } from "./errors";

/**
 * Holds serve's lock on every data dir among `locations` while a command
 * rewrites it (`migrate`, `backup restore`): a running server is named by
 * its PID, and none can start midway. Answers the release.
 */
export async function holdDataDirs(locations: StoreLocation[]): Promise<() => void> {
  const { acquireServerLock, ServerLockedError } = await import("../src/runtime/serverLock");
  const held: { release(): void }[] = [];
  const release = () => {
    for (const lock of held.splice(0)) lock.release();
  };
  try {
    for (const loc of locations) {
      if (loc.databaseUrl === undefined && existsSync(loc.dataDir)) held.push(acquireServerLock(loc.dataDir));
    }
  } catch (err) {
    release();
    if (err instanceof ServerLockedError) {
      const who = err.holderPid === null ? "a hookrelay serve" : `hookrelay serve (PID ${err.holderPid})`;
      throw new CliError(`${who} is running on data dir ${err.dataDir}: stop it first`, EXIT.error, "conflict");
    }
    throw err;
  }
  return release;
}

/**
 * Runs `work` while serve's lock on every data dir among `locations` is held,
 * released however it ends; the domain's refusals become the CLI's errors.
 */
export async function whileDataDirsHeld<T>(locations: StoreLocation[], work: () => Promise<T>): Promise<T> {
  const [{ AppError }, { apiErrorToCli }] = await Promise.all([import("../src/contracts/errors"), import("./errors")]);
  const release = await holdDataDirs(locations);
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) throw apiErrorToCli(err.status, err.toBody());
    throw err;
  } finally {
    release();
  }
}

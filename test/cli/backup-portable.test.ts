import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import { tempDir, type TestServer } from "../helpers/server";
import { cli, modeEnvs, ok } from "./helpers";

/**
 * `hookrelay backup create --portable`, `backup list` and `migrate`'s usage,
 * from the CLI in remote and local mode (docs/operations.md, "Backups").
 */
const backupDir = tempDir("hookrelay-cli-backups-");
let server: TestServer, key: string;
useServer({ env: { HOOKRELAY_BACKUP_DIR: backupDir } }, (s) => ({ server, key } = s));

const envs = () => {
  const { remoteEnv, localEnv } = modeEnvs(server, key);
  return { remoteEnv, localEnv: { ...localEnv, HOOKRELAY_BACKUP_DIR: backupDir } };
};

describe("hookrelay backup create --portable", () => {
  it("writes the portable archive into the backup dir in both modes, and backup list shows its format", async () => {
    const { remoteEnv, localEnv } = envs();
    const made = [];
    for (const env of [remoteEnv, localEnv]) {
      const backup = ok(await cli(["backup", "create", "--portable", "--json"], { env })).backup;
      expect(backup).toMatchObject({ kind: "manual", format: "portable" });
      expect(backup.name).toMatch(/^hookrelay-.*\.hrbk$/);
      expect(existsSync(join(backupDir, backup.name))).toBe(true);
      made.push(backup.name);
    }
    // Local mode names the file's path too (the data dir is the caller's own); the API names none.
    for (const env of [remoteEnv, localEnv]) {
      const list = ok(await cli(["backup", "list", "--json"], { env }));
      for (const name of made) expect(list.backups).toContainEqual(expect.objectContaining({ name, format: "portable", kind: "manual" }));
    }
  }, 60_000);

  it("--out writes the archive to a file, which restores into a new data dir", async () => {
    const { localEnv } = envs();
    const out = join(tempDir("hookrelay-cli-out-"), "instance.hrbk");
    const backup = ok(await cli(["backup", "create", "--portable", "--out", out, "--json"], { env: localEnv })).backup;
    expect(backup).toMatchObject({ format: "portable", path: out });
    const target = tempDir("hookrelay-cli-restored-");
    const restored = ok(await cli(["backup", "restore", out, "--data-dir", target, "--json"], { env: modeEnvs(server, key).remoteEnv }));
    expect(restored).toMatchObject({ restored_from: out, target: join(target, "hookrelay.db"), replaced_database_kept_as: null });
    expect(restored.rows).toBeGreaterThan(0);
  }, 60_000);
});

describe("hookrelay migrate: usage", () => {
  it("needs --from and --to, each a data dir or a postgres:// URL (exit 2)", async () => {
    const env = modeEnvs(server, key).remoteEnv;
    const missing = await cli(["migrate", "--from", tempDir()], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("migrate needs --from and --to");
    const scheme = await cli(["migrate", "--from", tempDir(), "--to", "mysql://db/x"], { env });
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain("only postgres:// URLs or data dir paths are stores");
  });

  it("refuses a source data dir without a database (exit 1)", async () => {
    const run = await cli(["migrate", "--from", tempDir("hookrelay-cli-nothing-"), "--to", tempDir("hookrelay-cli-to-")], { env: modeEnvs(server, key).remoteEnv });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("no hookrelay database in");
  });
});

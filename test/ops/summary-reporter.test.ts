import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

describe("the summary reporter", () => {
  it("counts a file that failed to load and one whose beforeAll threw as failed (never `0 failed`)", async () => {
    // A nested vitest run over a fixture suite: one passing test, one skipped, a beforeAll that throws, an import that fails.
    const proc = Bun.spawn([process.execPath, "--bun", join(root, "node_modules/vitest/vitest.mjs"), "run", "--config", "test/fixtures/reporter/vitest.config.ts"], {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, NO_COLOR: "1" },
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code, stderr).toBe(1);
    const line = /tests: (\d+) passed, (\d+) failed, (\d+) skipped/.exec(stdout);
    expect(line, stdout).not.toBeNull();
    expect(line!.slice(1).map(Number)).toEqual([1, 2, 3]);
    expect(stdout).toMatch(/files that failed before their tests could run: .*before-all-fails\.fixture\.ts.*import-fails\.fixture\.ts/);
  });
});

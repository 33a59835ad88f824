import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * scripts/test-prereqs.sh, the first step of `npm test` and .ci/run, on a
 * PATH where chromium, tmux and qemu are missing; `id` and `apt-get` are
 * stand-ins that say who runs and record what would be installed.
 */
const script = join(import.meta.dirname, "../../scripts/test-prereqs.sh");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function fakeBin(opts: { uid: number; aptGet: boolean }) {
  const dir = mkdtempSync(join(tmpdir(), "hookrelay-prereqs-"));
  dirs.push(dir);
  const log = join(dir, "apt-get.log");
  writeFileSync(join(dir, "id"), `#!/bin/bash\necho ${opts.uid}\n`);
  if (opts.aptGet) writeFileSync(join(dir, "apt-get"), `#!/bin/bash\necho "$@" >> ${log}\n`);
  for (const f of ["id", "apt-get"]) {
    try {
      chmodSync(join(dir, f), 0o755);
    } catch {}
  }
  return { dir, log };
}

async function run(path: string) {
  const proc = Bun.spawn(["/bin/bash", script], { env: { PATH: path }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("the tests' system packages (scripts/test-prereqs.sh)", () => {
  it("stops at once with the one command to run when it may not install them", async () => {
    const bin = fakeBin({ uid: 1000, aptGet: true });
    const r = await run(bin.dir);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual(["error: the tests need Debian packages npm cannot install; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium tmux qemu-user"]);
    expect(() => readFileSync(bin.log)).toThrow();
  });

  it("says what is missing on a machine without apt-get", async () => {
    const r = await run(fakeBin({ uid: 0, aptGet: false }).dir);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("chromium tmux qemu-user");
  });

  it("installs them itself as root with apt-get", async () => {
    const bin = fakeBin({ uid: 0, aptGet: true });
    const r = await run(bin.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(bin.log, "utf8").trim().split("\n")).toEqual(["update -qq", "install -y -qq --no-install-recommends chromium tmux qemu-user"]);
  });

  it("does nothing on this machine, where everything is there", async () => {
    const r = await run(process.env.PATH ?? "/usr/bin:/bin");
    expect(r).toMatchObject({ code: 0, stderr: "" });
  });
});

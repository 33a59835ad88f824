import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderEnvExample } from "../../scripts/env-example";
import { serverOptions } from "../../src/config/options";

const root = join(import.meta.dirname, "../..");
const envExample = join(root, "scripts/packaging/hookrelay.env.example");
const unitFile = join(root, "scripts/packaging/hookrelay.service");
const systemdAnalyze = Bun.which("systemd-analyze");

describe("scripts/packaging/hookrelay.env.example", () => {
  it("is what the option table renders (run `bun scripts/env-example.ts` after changing an option)", () => {
    expect(readFileSync(envExample, "utf8")).toBe(renderEnvExample());
  });

  it("lists every HOOKRELAY_* setting once, with a default the server parses back to its own", () => {
    const lines = readFileSync(envExample, "utf8").split("\n");
    for (const o of Object.values(serverOptions)) {
      const entries = lines.filter((l) => l.startsWith(`#${o.env}=`));
      expect(entries, o.env).toHaveLength(1);
      if (o.env === "HOOKRELAY_DATA_DIR") continue;
      const value = entries[0]!.slice(o.env.length + 2);
      expect((o.parse as (raw: string) => unknown)(value), o.env).toEqual(o.default);
    }
  });
});

describe("scripts/packaging/hookrelay.service", () => {
  const unit = readFileSync(unitFile, "utf8");
  const directives = new Map(unit.split("\n").filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));

  it("runs serve as a dedicated user in its state directory, hardened, restarted on failure, drained on stop", () => {
    expect(directives.get("User")).toBe("hookrelay");
    expect(directives.get("StateDirectory")).toBe("hookrelay");
    expect(directives.get("Environment")).toBe("HOOKRELAY_DATA_DIR=/var/lib/hookrelay");
    expect(directives.get("EnvironmentFile")).toBe("-/etc/hookrelay/hookrelay.env");
    expect(directives.get("ExecStart")).toBe("/usr/local/bin/hookrelay serve");
    expect(directives.get("Restart")).toBe("on-failure");
    expect(directives.get("NoNewPrivileges")).toBe("yes");
    expect(directives.get("ProtectSystem")).toBe("strict");
    expect(directives.get("KillSignal")).toBe("SIGTERM");
    // After the network and a local PostgreSQL; a database not there yet is waited for by serve itself.
    expect(directives.get("After")!.split(" ")).toEqual(expect.arrayContaining(["network-online.target", "postgresql.service"]));
    expect(serverOptions.databaseWait.default).toBeUndefined();
    // Restarts spaced so that the start limit is only reached by a real crash loop.
    expect(Number(directives.get("RestartSec")) * Number(directives.get("StartLimitBurst"))).toBeLessThan(Number(directives.get("StartLimitIntervalSec")));
    // systemd must wait longer than serve's own drain deadline before it kills.
    expect(Number(directives.get("TimeoutStopSec")) * 1000).toBeGreaterThan(serverOptions.shutdownTimeoutMs.default);
  });

  it.skipIf(!systemdAnalyze)("passes systemd-analyze verify without a warning", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookrelay-unit-"));
    try {
      // verify checks that ExecStart's program exists: point it at one that does.
      const program = existsSync(join(root, "dist/hookrelay")) ? join(root, "dist/hookrelay") : process.execPath;
      writeFileSync(join(dir, "hookrelay.service"), unit.replace("ExecStart=/usr/local/bin/hookrelay", `ExecStart=${program}`));
      const proc = Bun.spawn([systemdAnalyze!, "verify", join(dir, "hookrelay.service")], { stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      expect({ code, output: (out + err).trim() }).toEqual({ code: 0, output: "" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

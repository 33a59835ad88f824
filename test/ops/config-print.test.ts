import { describe, expect, it } from "vitest";
import { ConfigError, serverOptions } from "../../src/config/options";
import { cli, cliEnv } from "../cli/helpers";

describe("hookrelay config print", () => {
  const env = cliEnv({
    HOOKRELAY_PORT: "9100",
    HOOKRELAY_SECRET_KEY: "super-secret-key-material",
    HOOKRELAY_ADMIN_PASSWORD: "hunter2-admin-password",
    HOOKRELAY_SMTP_URL: "smtp://mailer:smtp-pass-word@mail.example.com:587",
    HOOKRELAY_BACKUP_INTERVAL: "24h",
  });

  it("shows every setting with its value and where it came from (flag, env, default), secrets redacted", async () => {
    const r = await cli(["config", "print", "--json", "--port", "9200", "--log-level", "debug"], { env });
    expect(r.code, r.stderr).toBe(0);
    const { config } = r.json();
    expect(Object.keys(config).sort()).toEqual(Object.keys(serverOptions).sort());
    expect(config.port).toEqual({ value: 9200, source: "flag", flag: "--port", env: "HOOKRELAY_PORT" });
    expect(config.logLevel).toMatchObject({ value: "debug", source: "flag" });
    expect(config.backupInterval).toMatchObject({ value: 86_400_000, as_written: "24h", source: "env", env: "HOOKRELAY_BACKUP_INTERVAL" });
    expect(config.endpointDisableAfter).toMatchObject({ value: 5 * 86_400_000, as_written: "5d", source: "default" });
    expect(config.retentionDays).toMatchObject({ value: 30, source: "default" });
    expect(config.baseUrl).toMatchObject({ value: "http://localhost:9200", source: "default" });
    expect(config.secretKey).toMatchObject({ value: "[redacted]", source: "env", redacted: true });
    expect(config.adminPassword).toMatchObject({ value: "[redacted]", source: "env", redacted: true });
    // Which server and user stay readable; the password does not.
    expect(config.smtpUrl).toMatchObject({ value: "smtp://mailer:[redacted]@mail.example.com:587", source: "env", redacted: true });
    for (const secret of ["super-secret-key-material", "hunter2-admin-password", "smtp-pass-word"]) expect(r.stdout).not.toContain(secret);
  });

  it("prints a table a person can read, with no secret in it either", async () => {
    const r = await cli(["config", "print"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/port\t9100\tenv\tHOOKRELAY_PORT/);
    expect(r.stdout).toMatch(/adminEmail\tadmin@localhost\tdefault\tHOOKRELAY_ADMIN_EMAIL/);
    expect(r.stdout).toMatch(/secretKey\t\[redacted\]\tenv/);
    // Durations as written, not in milliseconds.
    expect(r.stdout).toMatch(/backupInterval\t24h\tenv\tHOOKRELAY_BACKUP_INTERVAL/);
    expect(r.stdout).toMatch(/endpointDisableAfter\t5d\tdefault/);
    expect(r.stdout).toMatch(/portalLinkTtl\t1h\tdefault/);
    expect(r.stdout).not.toMatch(/\t(86400000|432000000|3600000)\t/);
    for (const secret of ["super-secret-key-material", "hunter2-admin-password", "smtp-pass-word"]) expect(r.stdout + r.stderr).not.toContain(secret);
  });

  it("fails like serve on a bad value", async () => {
    const r = await cli(["config", "print"], { env: { ...env, HOOKRELAY_BACKUP_INTERVAL: "daily" } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('error: backup interval must be a duration such as 90s, 30m, 24h or 7d (or off), got "daily"');
  });
});

describe("HOOKRELAY_BACKUP_INTERVAL", () => {
  it("takes 90s, 30m, 24h and 7d, and off (the default)", () => {
    const parse = serverOptions.backupInterval.parse;
    expect([parse("90s"), parse("30m"), parse("24h"), parse("7d")]).toEqual([90_000, 1_800_000, 86_400_000, 604_800_000]);
    expect([parse("off"), parse(""), parse("0")]).toEqual([undefined, undefined, undefined]);
    expect(serverOptions.backupInterval.default).toBeUndefined();
    for (const bad of ["10", "1.5h", "0s", "-1h", "1w"]) expect(() => parse(bad)).toThrow(ConfigError);
  });
});

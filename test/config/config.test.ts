import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config";
import { serverOptions } from "../../src/config/options";
import { renderConfigurationDoc } from "../../scripts/docs-config";

describe("loadConfig", () => {
  it("takes defaults when nothing is set", () => {
    const c = loadConfig({}, {});
    expect(c.port).toBe(8080);
    expect(c.host).toBe("0.0.0.0");
    expect(c.dataDir).toMatch(/\/data$/);
    expect(c.baseUrl).toBe("http://localhost:8080");
    expect(c.maxBodyBytes).toBe(5 * 1024 * 1024);
    expect(c.retentionDays).toBe(30);
    expect(c.sync).toBe("normal");
  });

  it("lets HOOKRELAY_* variables override defaults and flags override variables", () => {
    const env = { HOOKRELAY_PORT: "9000", HOOKRELAY_SYNC: "full", HOOKRELAY_BASE_URL: "https://hooks.example.com/" };
    expect(loadConfig({}, env)).toMatchObject({ port: 9000, sync: "full", baseUrl: "https://hooks.example.com" });
    expect(loadConfig({ port: "9100" }, env).port).toBe(9100);
  });

  it("reads the OTLP export timeout in milliseconds, the traces one winning (10 s when neither is set)", () => {
    expect(loadConfig({}, {})).toMatchObject({ otelTimeout: 10_000, otelTracesTimeout: undefined });
    expect(loadConfig({}, { OTEL_EXPORTER_OTLP_TIMEOUT: "2500" })).toMatchObject({ otelTimeout: 2500, otelTracesTimeout: undefined });
    expect(loadConfig({}, { OTEL_EXPORTER_OTLP_TIMEOUT: "2500", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "700" })).toMatchObject({ otelTimeout: 2500, otelTracesTimeout: 700 });
    // Left empty in an env file: unset.
    expect(loadConfig({}, { OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "" })).toMatchObject({ otelTracesTimeout: undefined });
  });

  it("refuses bad values with a one-line reason", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ HOOKRELAY_PORT: "abc" }, /port must be a whole number/],
      [{ HOOKRELAY_PORT: "70000" }, /port must be between/],
      [{ HOOKRELAY_SYNC: "sometimes" }, /sync must be one of normal, full/],
      [{ HOOKRELAY_BASE_URL: "ftp://x" }, /base URL must be an http\(s\) URL/],
      [{ HOOKRELAY_BLOCK_PRIVATE_DESTINATIONS: "maybe" }, /must be true or false/],
      [{ HOOKRELAY_LOG_LEVEL: "loud" }, /log level must be one of/],
      [{ OTEL_EXPORTER_OTLP_TIMEOUT: "10s" }, /OTLP timeout must be a whole number/],
    ];
    for (const [env, message] of cases) {
      let error: unknown;
      try {
        loadConfig({}, env);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain("\n");
    }
  });
});

describe("docs/configuration.md", () => {
  it("lists every option with its variable, as generated from the option table", () => {
    const doc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    expect(doc).toBe(renderConfigurationDoc());
    for (const o of Object.values(serverOptions)) expect(doc).toContain(o.env);
  });
});

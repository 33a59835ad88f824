import { describe, expect, it } from "vitest";
import { useServer } from "../helpers/fixture";
import type { TestServer } from "../helpers/server";
import { cli, modeEnvs, ok, refused } from "./helpers";

/**
 * `--retry-schedule` on `destinations` and `endpoints` create and update
 * (docs/delivery.md, "Retry schedules"), in both modes: comma-separated
 * steps, `null` clears, a bad step is the API's 400 (exit 1) in both.
 */
let server: TestServer;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;

useServer({}, (s) => {
  server = s.server;
  ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key));
});

const remote = (args: string[]) => cli([...args, "--json"], { env: remoteEnv });
const local = (args: string[]) => cli([...args, "--json"], { env: localEnv });
const both = (args: string[]) => Promise.all([remote(args), local(args)]);

describe("destinations --retry-schedule", () => {
  it("sets a schedule from comma-separated steps, changes it from the other mode, and clears it with null", async () => {
    const d = ok(await remote(["destinations", "create", "--name", "scheduled", "--url", "https://example.com/hook", "--retry-schedule", "5s,5m,30m,2h"])).destination;
    expect(d.retry_schedule).toBe('["5s","5m","30m","2h"]');
    const changed = ok(await local(["destinations", "update", d.id, "--retry-schedule", "1m,1h"])).destination;
    expect(changed.retry_schedule).toBe('["1m","1h"]');
    expect(ok(await remote(["destinations", "get", d.id])).destination.retry_schedule).toBe('["1m","1h"]');
    expect(ok(await remote(["destinations", "update", d.id, "--retry-schedule", "null"])).destination.retry_schedule).toBeNull();
  });

  it("refuses a step that is no duration or is 0s, exit 1 with the API's validation error", async () => {
    for (const bad of ["5s,abc", "0s", "8d"]) {
      const error = refused(await both(["destinations", "create", "--name", "bad", "--url", "https://example.com/bad", "--retry-schedule", bad]), "validation_error");
      expect(JSON.stringify(error)).toContain("retry_schedule");
    }
  });
});

describe("endpoints --retry-schedule", () => {
  it("sets and clears an endpoint's schedule in both modes", async () => {
    const app = ok(await remote(["apps", "create", "--name", "Sched Co", "--uid", "sched"])).application;
    const e = ok(await local(["endpoints", "create", "--app", "sched", "--url", "https://example.com/e", "--retry-schedule", "10s,10m"])).endpoint;
    expect(e).toMatchObject({ application_id: app.id, retry_schedule: '["10s","10m"]' });
    expect(ok(await remote(["endpoints", "update", e.id, "--app", "sched", "--retry-schedule", "null"])).endpoint.retry_schedule).toBeNull();
    refused(await both(["endpoints", "update", e.id, "--app", "sched", "--retry-schedule", Array(21).fill("1s").join(",")]), "validation_error");
  });
});

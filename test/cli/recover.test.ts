import { describe, expect, it } from "vitest";
import type { Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";
import { cli, modeEnvs, ok, refused } from "./helpers";

/**
 * `destinations recover` and `endpoints recover`, remote and local, against
 * a real sink that is down and then back. A job started in local mode is run
 * by the server's job runner (its poll finds it).
 */
let sink: Sink;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;
let down = true;

useServer({ sink: true }, (s) => {
  ({ sink } = s);
  ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key));
  sink.respond = (req) => (req.path === "/recover" && down ? new Response("down", { status: 503 }) : new Response("ok"));
});

const remote = (args: string[]) => cli([...args, "--json"], { env: remoteEnv });
const local = (args: string[]) => cli([...args, "--json"], { env: localEnv });
const ingest = async (url: string, body: unknown) => ((await (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json()) as { event_id: string }).event_id;
async function until<T>(fn: () => Promise<T>, good: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (good(v) || Date.now() > end) return v;
    await Bun.sleep(100);
  }
}
const sentTimes = (eventId: string) => sink.requests.filter((r) => r.headers["x-hookrelay-event-id"] === eventId).length;

describe("hookrelay destinations recover", () => {
  it("re-sends the window's failures: remote with --wait, local started and followed with jobs get --wait", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const source = ok(await remote(["sources", "create", "--name", "recover-cli"])).source;
    const dest = ok(await remote(["destinations", "create", "--name", "flaky", "--url", `${sink.url}/recover`, "--max-retries", "0"])).destination;
    ok(await remote(["connections", "create", "--name", "to-flaky", "--source-id", source.id, "--destination-id", dest.id]));
    const failedOnce = async (eventId: string) =>
      until(
        () => remote(["attempts", "list", "--event-id", eventId, "--dlq"]).then(ok),
        (r: any) => r.delivery_attempts.length === 1,
      );

    const first = await ingest(source.ingest_url, { n: 1 });
    await failedOnce(first);
    down = false;
    const waited = ok(await remote(["destinations", "recover", dest.id, "--since", since, "--wait", "--timeout", "20"]));
    expect(waited).toMatchObject({ kind: "recover", status: "completed", total: 1, processed: 1, succeeded: 1, failed: 0 });
    await until(async () => sentTimes(first), (n) => n === 2);

    down = true;
    const second = await ingest(source.ingest_url, { n: 2 });
    await failedOnce(second);
    down = false;
    const started = ok(await local(["destinations", "recover", dest.id, "--since", since]));
    expect(started).toEqual({ job_id: expect.stringMatching(/^[0-9a-f]{32}$/), total: 1, skipped: 0 });
    const done = ok(await remote(["jobs", "get", started.job_id, "--wait", "--timeout", "20"]));
    expect(done).toMatchObject({ kind: "recover", status: "completed", total: 1, succeeded: 1 });
    await until(async () => sentTimes(second), (n) => n === 2);
    expect(sentTimes(first)).toBe(2);

    // Nothing left in the window: exit 1 in both modes.
    for (const r of await Promise.all([remote(["destinations", "recover", dest.id, "--since", since]), local(["destinations", "recover", dest.id, "--since", since])])) {
      expect(r.code).toBe(1);
      expect(r.errorJson().error.code).toBe("nothing_done");
    }
  });

  it("refuses a bad window the same way in both modes", async () => {
    const dest = ok(await remote(["destinations", "create", "--name", "window", "--url", `${sink.url}/window`])).destination;
    const since = new Date(Date.now() - 60_000).toISOString();
    const error = refused(await Promise.all([remote(["destinations", "recover", dest.id, "--since", since, "--until", since]), local(["destinations", "recover", dest.id, "--since", since, "--until", since])]), "validation_error");
    expect(error.details.map((d: { field: string }) => d.field)).toContain("body.until");
    refused(await Promise.all([remote(["destinations", "recover", dest.id, "--since", "last tuesday"]), local(["destinations", "recover", dest.id, "--since", "last tuesday"])]), "validation_error");
  });
});

describe("hookrelay endpoints recover", () => {
  it("starts a job for the endpoint in both modes; an unknown endpoint is not found", async () => {
    const app = ok(await remote(["apps", "create", "--name", "recover-app"])).application;
    const ep = ok(await remote(["endpoints", "create", "--app", app.id, "--url", `${sink.url}/ep-cli`])).endpoint;
    const since = new Date(Date.now() - 60_000).toISOString();
    for (const r of await Promise.all([remote(["endpoints", "recover", ep.id, "--app", app.id, "--since", since]), local(["endpoints", "recover", ep.id, "--app", app.id, "--since", since])])) {
      // Nothing failed there: the job is made, has nothing to do, and the command says so.
      expect(r.code, r.stderr).toBe(1);
      expect(r.errorJson().error).toMatchObject({ code: "nothing_done", details: { total: 0, skipped: 0 } });
    }
    refused(await Promise.all([remote(["endpoints", "recover", "0".repeat(32), "--app", app.id, "--since", since]), local(["endpoints", "recover", "0".repeat(32), "--app", app.id, "--since", since])]), "not_found");
  });
});

import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { events } from "../../src/db/schema";
import { insertEvent, scopeOf } from "../helpers/rows";
import { call, type TestServer } from "../helpers/server";
import { startSink, type Sink } from "../helpers/sink";
import { useServer } from "../helpers/fixture";
import { BINARY, cliEnv, ensureBinary, startCli } from "./helpers";

/** `listen` (forwarding to a local sink, --since) and `events tail` (JSON lines when piped; the TUI in tmux). */
let server: TestServer, key: string, sink: Sink;
let env: Record<string, string>;
let source: { id: string; ingest_url: string };

beforeAll(() => ensureBinary());
useServer({ sink: true }, (s) => ({ server, key, sink } = s));
beforeAll(async () => {
  env = cliEnv({ HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key });
  source = (await call(server, "POST", "/v1/sources", { key, body: { name: "Local dev" } })).body.source;
});

async function ingest(body: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(source.ingest_url, { method: init.method ?? "POST", headers: init.headers, body });
  expect(res.status).toBe(200);
  return ((await res.json()) as { event_id: string }).event_id;
}

describe("listen", () => {
  it("forwards events as received, including those from --since and those that arrived while it was stopped (--since last)", async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    const early = await ingest('{"n":1}', { headers: { "content-type": "application/json", "x-custom": "kept" } });

    const first = startCli(["listen", "local-dev", "--forward", `${sink.url}/hooks?from=cli`, "--since", before, "--json"], { env });
    await first.waitForLine((l) => l.includes(early));
    const live = await ingest("name=two", { method: "PUT", headers: { "content-type": "application/x-www-form-urlencoded" } });
    const line = JSON.parse(await first.waitForLine((l) => l.includes(live)));
    expect(line).toMatchObject({ event_id: live, method: "PUT", status: 200, error: null, source_id: source.id });
    expect(await first.stop()).toBe(0);

    const [a, b] = await sink.waitFor(2);
    expect(a).toMatchObject({ method: "POST", path: "/hooks?from=cli", body: '{"n":1}' });
    expect(a!.headers).toMatchObject({ "content-type": "application/json", "x-custom": "kept", "x-hookrelay-event-id": early, "x-hookrelay-source-id": source.id });
    expect(b).toMatchObject({ method: "PUT", body: "name=two" });

    // The laptop was closed: this one arrives while nothing listens.
    const missed = await ingest("while away");
    const second = startCli(["listen", source.id, "--forward", `${sink.url}/hooks?from=cli`, "--since", "last", "--json"], { env });
    await second.waitForLine((l) => l.includes(missed));
    expect(await second.stop()).toBe(0);
    expect(sink.requests.map((r) => r.headers["x-hookrelay-event-id"])).toEqual([early, live, missed]);
  });
});

describe("listen skips rejected events", () => {
  it("a forged signature is never forwarded: listen prints that it skipped it and why, and forwards the genuine one", async () => {
    const key = await server.apiKey();
    const github = (await call(server, "POST", "/v1/sources", { key, body: { name: "GitHub listen", template: "github", verification_secret: "gh-secret" } })).body.source;
    const target = startSink();
    try {
      const before = new Date(Date.now() - 1000).toISOString();
      const forged = await fetch(github.ingest_url, { method: "POST", headers: { "x-hub-signature-256": "sha256=" + "0".repeat(64) }, body: '{"forged":true}' });
      expect(forged.status).toBe(401);
      const forgedId = ((await forged.json()) as { error: { details: { event_id: string } } }).error.details.event_id;
      const body = '{"genuine":true}';
      const signature = "sha256=" + new Bun.CryptoHasher("sha256", "gh-secret").update(body).digest("hex");
      const genuine = await fetch(github.ingest_url, { method: "POST", headers: { "x-hub-signature-256": signature }, body });
      expect(genuine.status).toBe(200);
      const genuineId = ((await genuine.json()) as { event_id: string }).event_id;

      const run = startCli(["listen", github.slug, "--forward", `${target.url}/gh`, "--since", before, "--json"], { env });
      const skipped = JSON.parse(await run.waitForLine((l) => l.includes(forgedId)));
      expect(skipped).toMatchObject({ event_id: forgedId, skipped: "rejected", status: null, reason: expect.stringContaining("signature verification failed") });
      expect(JSON.parse(await run.waitForLine((l) => l.includes(genuineId)))).toMatchObject({ status: 200, skipped: null });
      expect(await run.stop()).toBe(0);
      expect(target.requests.map((r) => r.headers["x-hookrelay-event-id"])).toEqual([genuineId]);
    } finally {
      target.close();
    }
  });
});

describe("listen and redacted headers", () => {
  it("does not forward a token header stored as [redacted] (GitLab), and forwards the others", async () => {
    const key = await server.apiKey();
    const gitlab = (await call(server, "POST", "/v1/sources", { key, body: { name: "GitLab listen", template: "gitlab", verification_secret: "glpat-listen-token" } })).body.source;
    const target = startSink();
    try {
      const before = new Date(Date.now() - 1000).toISOString();
      const res = await fetch(gitlab.ingest_url, { method: "POST", headers: { "x-gitlab-token": "glpat-listen-token", "x-gitlab-event": "Push Hook" }, body: "{}" });
      expect(res.status).toBe(200);
      const id = ((await res.json()) as { event_id: string }).event_id;

      const run = startCli(["listen", gitlab.slug, "--forward", `${target.url}/gl`, "--since", before, "--json"], { env });
      expect(JSON.parse(await run.waitForLine((l) => l.includes(id)))).toMatchObject({ status: 200 });
      expect(await run.stop()).toBe(0);
      const [req] = await target.waitFor(1);
      expect(req!.headers["x-gitlab-event"]).toBe("Push Hook");
      expect(req!.headers["x-gitlab-token"]).toBeUndefined();
    } finally {
      target.close();
    }
  });
});

describe("listen --since last", () => {
  it("a forward that failed (target down) is forwarded by the next --since last run, once", async () => {
    const key = await server.apiKey();
    const src = (await call(server, "POST", "/v1/sources", { key, body: { name: "resume-down" } })).body.source;
    // A port nothing listens on until the target comes up.
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const forward = `http://127.0.0.1:${port}/hook`;
    const args = ["listen", src.id, "--forward", forward, "--since", "last", "--json"];

    const before = new Date(Date.now() - 1000).toISOString();
    const missed = await ingestTo(src, "missed");
    const down = startCli(["listen", src.id, "--forward", forward, "--since", before, "--json"], { env });
    expect(JSON.parse(await down.waitForLine((l) => l.includes(missed)))).toMatchObject({ status: null, error: expect.stringContaining("connection refused") });
    expect(await down.stop()).toBe(0);

    const received: string[] = [];
    const target = Bun.serve({ port, hostname: "127.0.0.1", fetch: (req) => (received.push(req.headers.get("x-hookrelay-event-id")!), new Response("ok")) });
    try {
      const up = startCli(args, { env });
      expect(JSON.parse(await up.waitForLine((l) => l.includes(missed)))).toMatchObject({ status: 200 });
      expect(await up.stop()).toBe(0);

      // Nothing is sent twice: the next run starts after it.
      const later = await ingestTo(src, "later");
      const next = startCli(args, { env });
      await next.waitForLine((l) => l.includes(later));
      expect(await next.stop()).toBe(0);
      expect(received).toEqual([missed, later]);
    } finally {
      target.stop(true);
    }
  });

  it("a non-2xx answer is sent again by the next run; events forwarded after it are not", async () => {
    const key = await server.apiKey();
    const src = (await call(server, "POST", "/v1/sources", { key, body: { name: "resume-500" } })).body.source;
    const target = startSink();
    target.respond = (req) => new Response(req.body === "broken" ? "boom" : "ok", { status: req.body === "broken" ? 500 : 200 });
    try {
      const args = ["listen", src.id, "--forward", `${target.url}/hook`, "--since", "last", "--json"];
      const before = new Date(Date.now() - 1000).toISOString();
      const broken = await ingestTo(src, "broken");
      const fine = await ingestTo(src, "fine");
      const first = startCli(["listen", src.id, "--forward", `${target.url}/hook`, "--since", before, "--json"], { env });
      expect(JSON.parse(await first.waitForLine((l) => l.includes(broken)))).toMatchObject({ status: 500 });
      await first.waitForLine((l) => l.includes(fine));
      expect(await first.stop()).toBe(0);

      target.respond = () => new Response("fixed");
      const second = startCli(args, { env });
      expect(JSON.parse(await second.waitForLine((l) => l.includes(broken)))).toMatchObject({ status: 200 });
      const after = await ingestTo(src, "after");
      await second.waitForLine((l) => l.includes(after));
      expect(await second.stop()).toBe(0);
      expect(second.lines.some((l) => l.includes(fine))).toBe(false);
      expect(target.requests.map((r) => r.body)).toEqual(["broken", "fine", "broken", "after"]);
    } finally {
      target.close();
    }
  });
});

describe("listen --since last and another node's late commit", () => {
  it("forwards an event committed after the run stopped with a received_at just before the run's position, and nothing twice", async () => {
    const key = await server.apiKey();
    const scope = await scopeOf(server, key);
    const src = (await call(server, "POST", "/v1/sources", { key, body: { name: "resume-late" } })).body.source;
    const target = startSink();
    try {
      const args = ["listen", src.id, "--forward", `${target.url}/hook`, "--since", "last", "--json"];
      const before = new Date(Date.now() - 1000).toISOString();
      const seen = await ingestTo(src, "seen");
      const first = startCli(["listen", src.id, "--forward", `${target.url}/hook`, "--since", before, "--json"], { env });
      await first.waitForLine((l) => l.includes(seen));
      expect(await first.stop()).toBe(0);

      // Another node stamped this one a moment before `seen` and committed it only now (src/db/horizon.ts).
      const [stored] = await server.deps.db.select({ receivedAt: events.receivedAt }).from(events).where(eq(events.id, seen));
      const late = await insertEvent(server, scope, src.id, { body: "late", receivedAt: new Date(Date.parse(stored!.receivedAt) - 100).toISOString() });
      const next = startCli(args, { env });
      await next.waitForLine((l) => l.includes(late));
      expect(await next.stop()).toBe(0);
      expect(target.requests.map((r) => r.headers["x-hookrelay-event-id"])).toEqual([seen, late]);
    } finally {
      target.close();
    }
  });
});

async function ingestTo(src: { ingest_url: string }, body: string) {
  const res = await fetch(src.ingest_url, { method: "POST", body });
  expect(res.status).toBe(200);
  return ((await res.json()) as { event_id: string }).event_id;
}

describe("events tail", () => {
  it("prints one JSON line per arriving event when piped", async () => {
    const tail = startCli(["events", "tail"], { env });
    const ids: string[] = [];
    let line: string | undefined;
    for (let i = 0; i < 6 && !line; i++) {
      ids.push(await ingest(`{"tail":${i}}`));
      line = await tail.waitForLine((l) => ids.some((id) => l.includes(id)), 1500).catch(() => undefined);
    }
    expect(await tail.stop()).toBe(0);
    const item = JSON.parse(line!);
    expect(ids).toContain(item.id);
    expect(item).toMatchObject({ source_id: source.id, method: "POST" });
  });

  const hasTmux = Bun.which("tmux") !== null;
  it.skipIf(!hasTmux)("shows an event that arrives after it started, and its detail view (compiled binary in tmux)", async () => {
    const session = `hookrelay-tail-${process.pid}`;
    const tmux = (...args: string[]) => Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" });
    const screen = () => tmux("capture-pane", "-p", "-t", session).stdout.toString();
    const waitScreen = async (match: (s: string) => boolean, what: string) => {
      const until = Date.now() + 30_000;
      while (!match(screen())) {
        if (Date.now() > until) throw new Error(`tmux screen never showed ${what}:\n${screen()}`);
        await Bun.sleep(50);
      }
    };
    const vars = ["XDG_CONFIG_HOME", "HOOKRELAY_URL", "HOOKRELAY_API_KEY"].map((k) => `${k}='${env[k]}'`).join(" ");
    expect(tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", `env TERM=xterm-256color ${vars} ${BINARY} events tail`).exitCode).toBe(0);
    try {
      await waitScreen((s) => s.includes("● live"), "the live marker");
      const id = await ingest('{"hello":"tmux"}', { headers: { "content-type": "application/json" } });
      await waitScreen((s) => s.includes(id), "the new event");
      expect(screen()).toMatch(/Local dev\s+POST/);
      tmux("send-keys", "-t", session, "Enter");
      await waitScreen((s) => s.includes('"hello": "tmux"'), "the event body in the detail view");
      const detail = screen();
      expect(detail).toContain("Headers");
      expect(detail).toContain("content-type: application/json");
      expect(detail).toContain("Delivery attempts");
      tmux("send-keys", "-t", session, "q");
      const until = Date.now() + 30_000;
      while (tmux("has-session", "-t", session).exitCode === 0 && Date.now() < until) await Bun.sleep(50);
      expect(tmux("has-session", "-t", session).exitCode).not.toBe(0);
    } finally {
      tmux("kill-session", "-t", session);
    }
  });

  it.skipIf(!hasTmux)("the detail names the destination and shows when each attempt was sent; opening another event clears the last retry's message (compiled binary in tmux)", async () => {
    const key = await server.apiKey();
    const target = startSink();
    const session = `hookrelay-tail2-${process.pid}`;
    const tmux = (...args: string[]) => Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" });
    const screen = () => tmux("capture-pane", "-p", "-t", session).stdout.toString();
    const waitScreen = async (match: (s: string) => boolean, what: string) => {
      const until = Date.now() + 30_000;
      while (!match(screen())) {
        if (Date.now() > until) throw new Error(`tmux screen never showed ${what}:\n${screen()}`);
        await Bun.sleep(50);
      }
    };
    try {
      const src = (await call(server, "POST", "/v1/sources", { key, body: { name: "tail-detail" } })).body.source;
      const dst = (await call(server, "POST", "/v1/destinations", { key, body: { name: "billing-api", url: `${target.url}/billing` } })).body.destination;
      expect((await call(server, "POST", "/v1/connections", { key, body: { name: "to-billing", source_id: src.id, destination_id: dst.id } })).status).toBe(201);
      const vars = ["XDG_CONFIG_HOME", "HOOKRELAY_URL", "HOOKRELAY_API_KEY"].map((k) => `${k}='${env[k]}'`).join(" ");
      expect(tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", `env TERM=xterm-256color ${vars} ${BINARY} events tail --source tail-detail`).exitCode).toBe(0);
      await waitScreen((s) => s.includes("● live"), "the live marker");
      const older = await ingestTo(src, '{"n":"older"}');
      await waitScreen((s) => s.includes(older), "the first event");
      const newer = await ingestTo(src, '{"n":"newer"}');
      await waitScreen((s) => s.includes(newer), "the second event");
      await target.waitFor(2);

      // The newest is selected: open it once its delivery is recorded, retry it.
      await waitScreen((s) => /›.*delivered/.test(s), "the delivered status of the selected event");
      tmux("send-keys", "-t", session, "Enter");
      await waitScreen((s) => s.includes("Delivery attempts (1)") && s.includes("billing-api"), "the attempt with the destination's name");
      expect(screen()).toMatch(/^ {2}\d\d:\d\d:\d\d {2}billing-api {2}success {2}200 /m);
      tmux("send-keys", "-t", session, "r");
      await waitScreen((s) => s.includes(`retry ${newer}: 1 queued`), "the retry's message");

      // Back to the list, down to the other event, open it: the message is gone.
      tmux("send-keys", "-t", session, "Escape");
      await waitScreen((s) => s.includes("enter details"), "the list");
      tmux("send-keys", "-t", session, "Down");
      // Enter acts on the selection as last drawn: a busy machine can deliver both keys before the move is drawn.
      await waitScreen((s) => s.split("\n").some((line) => line.includes("›") && line.includes(older)), "the other event selected");
      tmux("send-keys", "-t", session, "Enter");
      await waitScreen((s) => s.includes('"n": "older"'), "the other event's detail");
      expect(screen()).not.toContain(`retry ${newer}`);
      tmux("send-keys", "-t", session, "q");
    } finally {
      tmux("kill-session", "-t", session);
      target.close();
    }
  });
});

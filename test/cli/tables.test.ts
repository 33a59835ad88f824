import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeChalk } from "../../cli/output/color";
import { table } from "../../cli/output/table";
import { call, startTestServer, type TestServer } from "../helpers/server";
import { BINARY, cliEnv, ensureBinary } from "./helpers";

/**
 * Tables never cut the column a user came for (ingest URL, destination URL,
 * error) and never shorten an id (it is pasted into the next command): at a
 * narrow width less useful columns are cut or dropped, and the wanted column wraps.
 */
const plain = makeChalk(0);
const SOURCE = {
  id: "src_01a20f092909725eb02617722e8385d4",
  name: "GitHub production webhooks",
  status: "active",
  verification_type: "hmac-sha256",
  event_count: 1234,
  last_event_at: new Date().toISOString(),
  ingest_url: "https://hooks.example.com/v1/ingest/src_01a20f092909725eb02617722e8385d4",
};
const COLUMNS = ["id", "name", "status", "verification_type", "event_count", "last_event_at", "ingest_url"];
/** A column's text across the lines of a table, joined with `sep` (a wrapped cell continues under its header). */
function column(text: string, header: string, sep = "") {
  const lines = text.trimEnd().split("\n");
  const at = lines[0]!.indexOf(header);
  return lines
    .slice(1)
    .map((l) => l.slice(at).trim())
    .join(sep);
}

describe("table at narrow widths", () => {
  it("shows everything in full when it fits", () => {
    const text = table([SOURCE], COLUMNS, plain, 250);
    expect(text).toContain(SOURCE.id);
    expect(text).toContain(SOURCE.ingest_url);
    expect(text).toContain("EVENT COUNT");
  });

  it("never shortens an id, however narrow: what a table prints can be pasted into the next command", () => {
    for (const width of [150, 80, 60]) {
      const text = table([SOURCE], COLUMNS, plain, width);
      expect(text.split("\n")[1]!.startsWith(SOURCE.id + " "), `at ${width} columns:\n${text}`).toBe(true);
      expect(text).not.toMatch(/[a-z]+_…/);
    }
  });

  it("at 80 columns drops counts and times before the URL, and the URL is never cut", () => {
    const text = table([SOURCE], COLUMNS, plain, 80);
    for (const line of text.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    expect(text).not.toContain("EVENT COUNT");
    expect(text).not.toContain("LAST EVENT AT");
    expect(text).toMatch(/^ID\s+NAME\s+STATUS\s+.*INGEST URL$/m);
    expect(text).not.toContain("…" + "/v1");
    expect(column(text, "INGEST URL")).toBe(SOURCE.ingest_url);
  });

  it("at 60 columns the URL stays whole, beside the whole id", () => {
    const text = table([SOURCE], COLUMNS, plain, 60);
    const lines = text.trimEnd().split("\n");
    // The whole id, a name cut to its minimum, the status and the URL: the rest has gone. With the whole
    // id there is no room left to wrap the URL into, so the row is wider than 60 and the terminal wraps it.
    expect(lines[0]).toMatch(/^ID\s+NAME\s+STATUS\s+INGEST URL$/);
    expect(lines[1]!.startsWith(SOURCE.id + " ")).toBe(true);
    expect(column(text, "INGEST URL")).toBe(SOURCE.ingest_url);
  });

  it("keeps a long error whole in an attempts table", () => {
    const error = "connect ECONNREFUSED 127.0.0.1:9 (connection refused) while delivering to https://api.example.com/webhooks/orders";
    const row = { id: "da_01a20f14d0187699af98fec56be9b372", created_at: new Date().toISOString(), event_id: "evt_01a20f12b6e7738e9748dc65753ba4f1", destination_name: "orders", status: "failed", response_status: null, duration_ms: 12, attempt_number: 3, trigger_type: "retry", error };
    const text = table([row], Object.keys(row), plain, 120);
    for (const line of text.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(120);
    expect(text).toContain(row.id);
    expect(text).toContain(row.event_id);
    // Wrapped onto several lines (at a space, or mid-word where there is none): whole once joined.
    expect(column(text, "ERROR", "").replace(/\s/g, "")).toBe(error.replace(/\s/g, ""));
    expect(text.trimEnd().split("\n").length).toBeGreaterThan(2);
    expect(text).toContain("failed");
  });
});

describe("sources list in an 80-column terminal (compiled binary in tmux)", () => {
  let server: TestServer;
  let env: Record<string, string>;
  let ingestUrl: string;
  beforeAll(async () => {
    [server] = await Promise.all([startTestServer(), ensureBinary()]);
    const key = await server.apiKey();
    env = cliEnv({ HOOKRELAY_URL: server.url, HOOKRELAY_API_KEY: key });
    ingestUrl = (await call(server, "POST", "/v1/sources", { key, body: { name: "A source with a rather long name" } })).body.source.ingest_url;
  });
  afterAll(() => server.close());

  const hasTmux = Bun.which("tmux") !== null;
  it.skipIf(!hasTmux)("shows the whole ingest URL", async () => {
    const session = `hookrelay-table-${process.pid}`;
    const tmux = (...args: string[]) => Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" });
    const vars = ["XDG_CONFIG_HOME", "HOOKRELAY_URL", "HOOKRELAY_API_KEY"].map((k) => `${k}='${env[k]}'`).join(" ");
    // The shell stays after the command so the screen can be read.
    expect(tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "20", `env TERM=xterm-256color NO_COLOR=1 ${vars} ${BINARY} sources list; echo DONE; sleep 30`).exitCode).toBe(0);
    try {
      const until = Date.now() + 30_000;
      let screen = "";
      while (!(screen = tmux("capture-pane", "-p", "-t", session).stdout.toString()).includes("DONE")) {
        if (Date.now() > until) throw new Error(`no output:\n${screen}`);
        await Bun.sleep(50);
      }
      const table = screen.slice(0, screen.indexOf("DONE"));
      expect(table).toMatch(/^ID\s+NAME\s+STATUS/m);
      // The whole id, which `sources get` takes back.
      expect(table).toMatch(/^src_[0-9a-f]{32}\s/m);
      // The URL's tail is on the lines under it, in its own column: joined, it is whole.
      expect(column(table, "INGEST URL")).toBe(ingestUrl);
    } finally {
      tmux("kill-session", "-t", session);
    }
  });
});

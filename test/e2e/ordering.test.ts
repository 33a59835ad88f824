/**
 * Ordered delivery in the admin UI (docs/delivery.md, "Ordered delivery"): the
 * connection page's panel shows a key blocked by its head in the DLQ, and
 * its Skip head button moves the key on. Setup through the API with the
 * browser's own session; what is under test through the UI.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Sink } from "../helpers/sink";
import { loginThroughUi, sessionCall, type Browser, type Hookrelay } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;

useBinaryAndBrowser({ sink: true }, (s) => ({ server, browser, sink } = s));
beforeAll(() => {
  sink.respond = (r) => new Response("x", { status: (JSON.parse(r.body) as { seq: string }).seq === "K1" ? 500 : 200 });
});

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

describe("the ordering panel", () => {
  it("shows a blocked key on the connection page and skips its head", async () => {
    const { page, guard } = browser;
    await loginThroughUi(page, guard, server.url, "/connections");
    const { source } = await call<{ source: { id: string; ingest_url: string } }>("POST", "/sources", { name: "Orders" });
    const { destination } = await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Ledger", url: `${sink.url}/in`, max_retries: 0 });
    const { connection } = await call<{ connection: { id: string } }>("POST", "/connections", {
      name: "Orders in order",
      source_id: source.id,
      destination_id: destination.id,
      ordered: true,
      ordering_key: "body.k",
      on_dlq: "block",
    });
    for (const seq of ["K1", "K2"]) {
      expect((await fetch(source.ingest_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ k: "cus_42", seq }) })).status).toBe(200);
      await Bun.sleep(2);
    }
    await sink.waitFor(1);

    await page.goto(`${server.url}/connections/${connection.id}`);
    const panel = page.getByRole("region", { name: "Ordering keys" });
    await panel.getByText("blocked").waitFor({ timeout: 15_000 });
    await expect(panel.textContent()).resolves.toContain("cus_42");
    await expect(page.getByLabel("Deliver in order, one event at a time per key").isChecked()).resolves.toBe(true);

    await panel.getByRole("button", { name: "Skip head" }).click();
    await sink.waitFor(2);
    expect(sink.requests.map((r) => (JSON.parse(r.body) as { seq: string }).seq)).toEqual(["K1", "K2"]);
    await panel.getByText("No key is waiting").waitFor({ timeout: 15_000 });
  });
});

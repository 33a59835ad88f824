/**
 * Recovery by time in the admin UI: a destination that was down fails two
 * events into the DLQ; once it works again, the destination's page recovers
 * the last hour and shows the job's progress. An endpoint's page offers the
 * same. Setup goes through the API with the browser's own session;
 * everything under test goes through the UI.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/delivery";
import type { Sink } from "../helpers/sink";
import { loginThroughUi, screenshot, type Browser, type Hookrelay, sessionCall } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;
let healthy = false;

useBinaryAndBrowser({ sink: true }, (s) => ({ server, browser, sink } = s));
beforeAll(async () => {
  sink.respond = () => (healthy ? new Response("ok") : new Response("down", { status: 503 }));
});

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

describe("the Recover panel", () => {
  it("re-sends a destination's failures of the last hour and shows the job's progress", async () => {
    const { page, guard } = browser;
    await loginThroughUi(page, guard, server.url, "/");
    const { source } = await call<{ source: { id: string; ingest_url: string } }>("POST", "/sources", { name: "Orders" });
    const { destination } = await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Fulfilment", url: `${sink.url}/in`, max_retries: 0 });
    await call("POST", "/connections", { name: "Orders to fulfilment", source_id: source.id, destination_id: destination.id });
    for (const n of [1, 2]) {
      const res = await fetch(source.ingest_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      expect(res.status).toBe(200);
    }
    await sink.waitFor(2);
    await waitFor(async () => (await call<{ pagination: { total: number } }>("GET", `/delivery-attempts?is_dlq=1&destination_id=${destination.id}&limit=1`)).pagination.total === 2, { what: "both in the DLQ" });

    healthy = true;
    await page.goto(`${server.url}/destinations/${destination.id}`);
    const panel = page.getByRole("region", { name: "Recover" });
    await panel.getByRole("button", { name: "Recover…" }).click();
    await expect(panel.getByLabel("Since").inputValue()).resolves.toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    await panel.getByRole("button", { name: "Start recovery" }).click();
    await panel.getByText("completed").waitFor({ timeout: 15_000 });
    await expect(panel.textContent()).resolves.toContain("2 of 2 processed · 2 succeeded · 0 failed");
    await sink.waitFor(4);
    await screenshot(page, "recover-destination");
  });

  it("is on an endpoint's page too", async () => {
    const { page } = browser;
    const { application } = await call<{ application: { id: string } }>("POST", "/applications", { name: "Acme" });
    const { endpoint } = await call<{ endpoint: { id: string } }>("POST", `/applications/${application.id}/endpoints`, { url: `${sink.url}/acme` });
    await page.goto(`${server.url}/applications/${application.id}/endpoints/${endpoint.id}`);
    const panel = page.getByRole("region", { name: "Recover" });
    await panel.getByRole("button", { name: "Recover…" }).click();
    await panel.getByRole("button", { name: "Start recovery" }).click();
    // Nothing failed there: the job completes at once with nothing to do.
    await panel.getByText("completed").waitFor({ timeout: 15_000 });
    await expect(panel.textContent()).resolves.toContain("0 of 0 processed");
  });
});

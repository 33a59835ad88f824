/**
 * The failure side in the admin UI: a destination that answers 500 fills the
 * dead-letter queue; once it works again the DLQ is redriven from the UI and
 * a bulk retry re-sends every event; then connection, destination and source
 * are deleted after confirmation. Setup goes through the API with the
 * browser's own session; everything under test goes through the UI.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Sink } from "../helpers/sink";
import { loginThroughUi, screenshot, type Browser, type Hookrelay, sessionCall } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;
let healthy = false;
const ids = { source: "", destination: "", connection: "", event: "", ingest: "" };

useBinaryAndBrowser({ sink: true }, (s) => ({ server, browser, sink } = s));
beforeAll(async () => {
  sink.respond = () => (healthy ? new Response("ok") : new Response("down for maintenance", { status: 500 }));
});

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

describe("dead-letter queue", () => {
  it("shows a delivery that ran out of retries in the DLQ", async () => {
    const { page, guard } = browser;
    await loginThroughUi(page, guard, server.url, "/attempts?is_dlq=1");
    await page.getByText("The dead-letter queue is empty").waitFor();

    const { source } = await call<{ source: { id: string; ingest_url: string } }>("POST", "/sources", { name: "Billing" });
    const { destination } = await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Flaky service", url: `${sink.url}/in`, max_retries: 0 });
    const { connection } = await call<{ connection: { id: string } }>("POST", "/connections", { name: "Billing to flaky", source_id: source.id, destination_id: destination.id });
    Object.assign(ids, { source: source.id, destination: destination.id, connection: connection.id, ingest: source.ingest_url });

    const res = await fetch(ids.ingest, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type: "invoice.paid", id: "in_1" }) });
    expect(res.status).toBe(200);
    ids.event = ((await res.json()) as { event_id: string }).event_id;
    await sink.waitFor(1);

    // The DLQ page is live: the dead delivery shows up without a reload.
    await page.locator("tbody tr", { hasText: "DLQ" }).waitFor({ timeout: 15_000 });
    const row = page.locator("tbody tr").first();
    await expect(row.textContent()).resolves.toContain("DLQ");
    await expect(row.textContent()).resolves.toContain("500");
    await screenshot(page, "33-dlq-full");

    await row.getByRole("button", { name: /Details of attempt/ }).click();
    const dialog = page.getByRole("dialog", { name: "Delivery attempt" });
    await expect(dialog.getByLabel("Response body").textContent()).resolves.toContain("down for maintenance");
    await page.keyboard.press("Escape");
  });

  it("redrives the DLQ once the destination works again", async () => {
    const { page } = browser;
    healthy = true;
    const before = sink.requests.length;
    const panel = page.getByRole("region", { name: "Redrive" });
    // The destination with entries in the DLQ is the one offered.
    await expect(panel.getByLabel("Destination").locator("option:checked").textContent()).resolves.toBe("Flaky service (1 in the DLQ)");
    await panel.getByRole("button", { name: "Redrive…" }).click();
    const dialog = page.getByRole("dialog", { name: "Redrive the dead-letter queue?" });
    await dialog.getByRole("button", { name: "Redrive" }).click();
    await panel.getByText("completed").waitFor({ timeout: 15_000 });
    await page.getByText("The dead-letter queue is empty").waitFor();
    await sink.waitFor(before + 1);
    await screenshot(page, "34-dlq-redriven");

    await page.getByRole("tab", { name: "All attempts" }).click();
    await page.getByLabel("Trigger").selectOption("redrive");
    await page.locator("tbody tr", { hasText: "success" }).waitFor({ timeout: 10_000 });
  });
});

describe("events", () => {
  it("retries every matching event in bulk and shows the job's progress", async () => {
    const { page } = browser;
    const before = sink.requests.length;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Events" }).click();
    await page.locator(`tr[data-row-id="${ids.event}"]`).waitFor();
    await page.getByRole("button", { name: "Retry all…" }).click();
    const dialog = page.getByRole("dialog", { name: "Retry these events?" });
    await dialog.getByRole("button", { name: "Retry 1 event" }).click();
    const job = page.getByRole("region", { name: "Bulk retry" });
    await job.getByText("completed").waitFor({ timeout: 15_000 });
    await sink.waitFor(before + 1);
    await screenshot(page, "35-bulk-retry");
  });
});

describe("deleting", () => {
  it("deletes a connection, a destination and a source, each after confirmation", async () => {
    const { page } = browser;
    const nav = page.getByRole("navigation", { name: "Main" });

    await nav.getByRole("link", { name: "Connections" }).click();
    await page.getByRole("link", { name: "Billing to flaky" }).click();
    await page.getByRole("button", { name: "Delete" }).click();
    const c = page.getByRole("alertdialog", { name: "Delete this connection?" });
    await screenshot(page, "36-connection-delete-confirm");
    await c.getByRole("button", { name: "Delete connection" }).click();
    await page.getByText("No connections yet").waitFor();

    await nav.getByRole("link", { name: "Destinations" }).click();
    await page.getByRole("link", { name: "Flaky service" }).click();
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("alertdialog", { name: "Delete this destination?" }).getByRole("button", { name: "Delete destination" }).click();
    await page.getByText("No destinations yet").waitFor();

    await nav.getByRole("link", { name: "Sources" }).click();
    await page.getByRole("link", { name: "Billing" }).click();
    await page.getByRole("button", { name: "Delete" }).click();
    const s = page.getByRole("alertdialog", { name: "Delete this source?" });
    // Cancel keeps it.
    await s.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("heading", { name: /Billing/, level: 1 }).waitFor();
    await page.getByRole("button", { name: "Delete" }).click();
    await s.getByRole("button", { name: "Delete source" }).click();
    await page.getByText("No sources yet").waitFor();
    await screenshot(page, "37-sources-after-delete");
  });
});

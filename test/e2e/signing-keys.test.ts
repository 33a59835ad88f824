/**
 * Ed25519 public keys in the admin UI and the consumer portal (docs/outbound.md
 * and docs/delivery.md, "Signatures"), in headless chromium against the
 * compiled binary: an endpoint added with Signing algorithm ed25519 shows its public
 * key with a copy button on its page, in the admin UI and through a portal
 * link; a destination switched to ed25519 shows its own. The key the page
 * shows verifies the `v1a` signature the binary sent, so key generation and
 * signing are shown to work in the compiled binary too.
 */
import { createPublicKey, verify } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sink, SinkRequest } from "../helpers/sink";
import { launchBrowser, type Browser, type Hookrelay, sessionCall } from "./helpers";
import { useBinaryAndBrowser } from "./fixture";

let server: Hookrelay;
let browser: Browser;
let sink: Sink;

useBinaryAndBrowser({ sink: true, login: true }, (s) => ({ server, browser, sink } = s));

const call = <T>(method: string, path: string, body?: unknown) => sessionCall<T>(browser, server.url, method, path, body);

function verifiesV1a(whpk: string, req: SinkRequest): boolean {
  const key = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(whpk.slice(5), "base64")]), format: "der", type: "spki" });
  const [entry] = req.headers["webhook-signature"]!.split(" ");
  expect(entry).toMatch(/^v1a,/);
  return verify(null, Buffer.from(`${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.${req.body}`), key, Buffer.from(entry!.slice(4), "base64"));
}

async function arrived(path: string) {
  await expect.poll(() => sink.requests.filter((r) => r.path === path).length, { timeout: 15_000 }).toBeGreaterThan(0);
  return sink.requests.find((r) => r.path === path)!;
}

let app: { id: string };
let endpointId = "";

describe("an ed25519 endpoint", () => {
  beforeAll(async () => {
    // The endpoint is on the local receiver: the application is opted in (docs/outbound.md, "What a portal link can reach").
    app = (await call<{ application: { id: string } }>("POST", "/applications", { name: "Keys Inc", uid: "keys", allow_private_endpoints: true })).application;
  });

  it("is added with Signing algorithm ed25519 and shows its public key with a copy button; the key verifies what the binary sent", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/applications/${app.id}/endpoints/new`);
    const form = page.getByRole("form", { name: "New endpoint" });
    await form.getByLabel("URL").fill(`${sink.url}/keys/ed`);
    await form.getByLabel("Signing algorithm").selectOption("ed25519");
    await expect(form.getByLabel("Signing secret (optional)").count()).resolves.toBe(0);
    await form.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("Endpoint added.").waitFor();
    endpointId = new URL(page.url()).pathname.split("/").pop()!;

    const panel = page.getByRole("region", { name: "Signing secret" });
    const shown = panel.getByLabel("Public key");
    await expect.poll(() => shown.inputValue()).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const whpk = await shown.inputValue();
    await expect(panel.getByRole("button", { name: "Copy" }).count()).resolves.toBe(1);
    expect(await call("GET", `/applications/${app.id}/endpoints/${endpointId}/public-key`)).toEqual({ public_key: whpk, algorithm: "ed25519" });
    // The private key is not on the page until revealed.
    await expect(panel.getByLabel("Private key").count()).resolves.toBe(0);

    await call("POST", `/applications/${app.id}/messages`, { event_type: "keys.check", payload: { n: 1 } });
    expect(verifiesV1a(whpk, await arrived("/keys/ed"))).toBe(true);
  });

  describe("through a portal link", () => {
    let portal: Browser;
    beforeAll(async () => {
      portal = await launchBrowser();
    });
    afterAll(async () => {
      await portal?.close();
    });

    it("shows the endpoint's public key to the customer", async () => {
      const { url } = await call<{ url: string }>("POST", `/applications/${app.id}/portal`, {});
      const { page } = portal;
      await page.goto(url);
      await page.getByText("Keys Inc", { exact: true }).waitFor();
      await page.goto(`${server.url}/portal/endpoints/${endpointId}`);
      const shown = page.getByRole("region", { name: "Signing secret" }).getByLabel("Public key");
      const expected = (await call<{ public_key: string }>("GET", `/applications/${app.id}/endpoints/${endpointId}/public-key`)).public_key;
      await expect.poll(() => shown.inputValue()).toBe(expected);
      portal.guard.assertClean();
    });
  });
});

describe("an ed25519 destination", () => {
  it("switched to ed25519 in its settings, shows its public key, which verifies a relayed event", async () => {
    const { page } = browser;
    const destination = (await call<{ destination: { id: string } }>("POST", "/destinations", { name: "Signed sink", url: `${sink.url}/keys/relay` })).destination;
    const source = (await call<{ source: { id: string } }>("POST", "/sources", { name: "Keys source" })).source;
    await call("POST", "/connections", { name: "Keys route", source_id: source.id, destination_id: destination.id });

    await page.goto(`${server.url}/destinations/${destination.id}`);
    const panel = page.getByRole("region", { name: "Signing secret" });
    await panel.getByRole("button", { name: "Reveal secret" }).waitFor();
    await expect(panel.getByLabel("Public key").count()).resolves.toBe(0);
    const settings = page.getByRole("form", { name: "Destination settings" });
    await settings.getByLabel("Signing algorithm").selectOption("ed25519");
    await settings.getByRole("button", { name: "Save destination" }).click();
    const shown = panel.getByLabel("Public key");
    await expect.poll(() => shown.inputValue()).toMatch(/^whpk_/);
    const whpk = await shown.inputValue();
    expect(await call("GET", `/destinations/${destination.id}/public-key`)).toEqual({ public_key: whpk, algorithm: "ed25519" });

    const res = await fetch(`${server.url}/v1/ingest/${source.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ order: 7 }) });
    expect(res.status).toBe(200);
    expect(verifiesV1a(whpk, await arrived("/keys/relay"))).toBe(true);
  });
});

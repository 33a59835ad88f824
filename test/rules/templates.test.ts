import { describe, expect, it } from "vitest";
import { templates } from "../../src/rules/templates";
import { verificationProblems } from "../../src/rules/verify";

describe("source templates", () => {
  it("cover the providers the contract names", () => {
    expect(templates.map((t) => t.id)).toEqual(
      expect.arrayContaining(["github", "stripe", "shopify", "slack", "svix", "standard-webhooks", "twilio", "gitlab", "generic-hmac-sha256", "generic-hmac-sha1"]),
    );
    expect(new Set(templates.map((t) => t.id)).size).toBe(templates.length);
  });

  it("are valid settings for their scheme, so a template plus a secret always saves", () => {
    const secret = "whsec_" + Buffer.from("k".repeat(24)).toString("base64");
    for (const t of templates) {
      expect(verificationProblems(t.verification_type, secret, t.verification_header, t.verification_config), t.id).toEqual([]);
    }
  });

  it("supply the provider's delivery id as the dedup key", () => {
    const dedup = Object.fromEntries(templates.map((t) => [t.id, [t.dedup_strategy, t.dedup_field]]));
    expect(dedup.github).toEqual(["header", "X-GitHub-Delivery"]);
    expect(dedup["standard-webhooks"]).toEqual(["header", "webhook-id"]);
    expect(dedup.shopify).toEqual(["header", "X-Shopify-Webhook-Id"]);
  });

  it("use a 300 s tolerance where the provider signs a timestamp", () => {
    for (const id of ["stripe", "slack", "svix", "standard-webhooks"]) {
      expect(templates.find((t) => t.id === id)!.verification_config.tolerance_seconds, id).toBe(300);
    }
  });
});

import { createHmac } from "node:crypto";
import { z } from "zod";
import { decodeSignature, digestEquals, parseUnixSeconds, timestampProblem } from "./compare";
import { DEFAULT_TOLERANCE_SECONDS } from "./hmac";
import { fail, OK, type Scheme, type VerifyRequest } from "./types";

/**
 * Standard Webhooks (and Svix, which is the same scheme under `svix-*` header
 * names): HMAC-SHA256 over `<id>.<timestamp>.<body>` with the base64 secret
 * (an optional `whsec_` prefix is dropped). The signature header is a
 * space-separated list of `v1,<base64>` entries; any match passes, which is
 * how senders rotate secrets.
 */
export const standardWebhooksConfig = z.object({
  id_header: z.string().min(1).max(200).optional(),
  timestamp_header: z.string().min(1).max(200).optional(),
  tolerance_seconds: z.number().int().min(0).max(7 * 24 * 3600).optional(),
});
export type StandardWebhooksConfig = z.infer<typeof standardWebhooksConfig>;

function decodeSecret(secret: string): Buffer | null {
  const raw = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw)) return null;
  const key = Buffer.from(raw, "base64");
  return key.length > 0 ? key : null;
}

export const standardWebhooks: Scheme<StandardWebhooksConfig> = {
  type: "standard-webhooks",
  defaultHeader: "webhook-signature",
  config: standardWebhooksConfig,
  secretProblem(secret) {
    return decodeSecret(secret) ? null : "must be base64, optionally prefixed with whsec_";
  },
  settingsProblem() {
    return null;
  },
  prepare(secret, header, config) {
    const key = decodeSecret(secret) ?? Buffer.alloc(0);
    const sigHeader = (header ?? "webhook-signature").toLowerCase();
    const idHeader = (config.id_header ?? "webhook-id").toLowerCase();
    const tsHeader = (config.timestamp_header ?? "webhook-timestamp").toLowerCase();
    const tolerance = config.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS;

    return (req: VerifyRequest) => {
      if (key.length === 0) return fail("verification secret is not valid base64");
      const id = req.headers[idHeader];
      const ts = req.headers[tsHeader];
      const signatures = req.headers[sigHeader];
      if (!id) return fail(`missing header ${idHeader}`);
      if (!ts) return fail(`missing header ${tsHeader}`);
      if (!signatures) return fail(`missing header ${sigHeader}`);
      const problem = timestampProblem(parseUnixSeconds(ts), req.nowSeconds, tolerance);
      if (problem) return fail(problem);

      const expected = createHmac("sha256", key).update(`${id}.${ts.trim()}.`).update(req.body).digest();
      for (const entry of signatures.trim().split(/\s+/)) {
        const comma = entry.indexOf(",");
        if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
        if (digestEquals(expected, decodeSignature(entry.slice(comma + 1), "base64"))) return OK;
      }
      return fail("no v1 signature matches");
    };
  },
};

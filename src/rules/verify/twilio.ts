import { createHash, createHmac } from "node:crypto";
import { z } from "zod";
import { decodeSignature, digestEquals } from "./compare";
import { fail, OK, type Scheme, type VerifyRequest } from "./types";

/**
 * Twilio: base64 HMAC-SHA1, keyed with the auth token, over the full URL
 * Twilio called followed by the form parameters sorted by name (each name
 * then its value). A JSON body is not signed itself: the URL carries its
 * SHA-256 in `bodySHA256`, which must match.
 *   url  the public URL Twilio is configured with, when it differs from
 *        HOOKRELAY_BASE_URL + path (e.g. behind a rewriting proxy)
 */
export const twilioConfig = z.object({ url: z.url({ protocol: /^https?$/ }).max(2000).optional() });
export type TwilioConfig = z.infer<typeof twilioConfig>;

function signedData(url: string, req: VerifyRequest): string {
  if (!req.contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded")) return url;
  const params = [...new URLSearchParams(Buffer.from(req.body).toString("utf8"))];
  params.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return url + params.map(([k, v]) => k + v).join("");
}

export const twilio: Scheme<TwilioConfig> = {
  type: "twilio",
  defaultHeader: "X-Twilio-Signature",
  config: twilioConfig,
  secretProblem: (secret) => (secret.length === 0 ? "must not be empty" : null),
  settingsProblem: () => null,
  prepare(secret, header, config) {
    const headerName = (header ?? "x-twilio-signature").toLowerCase();
    return (req) => {
      const presented = req.headers[headerName];
      if (!presented) return fail(`missing signature header ${headerName}`);
      const url = config.url ? config.url + (req.url.includes("?") ? req.url.slice(req.url.indexOf("?")) : "") : req.url;
      const bodyHash = new URL(url).searchParams.get("bodySHA256");
      if (bodyHash !== null && bodyHash.toLowerCase() !== createHash("sha256").update(req.body).digest("hex")) {
        return fail("bodySHA256 does not match the body");
      }
      const expected = createHmac("sha1", secret).update(signedData(url, req)).digest();
      return digestEquals(expected, decodeSignature(presented, "base64")) ? OK : fail("signature does not match");
    };
  },
};

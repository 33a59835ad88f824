import { createHmac } from "node:crypto";
import { z } from "zod";
import { decodeSignature, digestEquals, parseUnixSeconds, timestampProblem } from "./compare";
import { fail, OK, type Scheme, type Verifier, type VerifyRequest } from "./types";

/**
 * One HMAC mechanism covering GitHub, Stripe, Shopify, Slack and the generic
 * providers. What differs between them is data:
 *   encoding          hex (default) or base64 digest
 *   prefix            stripped from the header value when present
 *                     (default `sha256=` / `sha1=`; Slack: `v0=`)
 *   signed_payload    what is signed: `{body}` (default), `{timestamp}.{body}`,
 *                     `v0:{timestamp}:{body}`, `{id}.{timestamp}.{body}`
 *   header_format     `plain` (the header is the signature) or `kv`
 *                     (`t=…,v1=…`: Stripe; several signature entries allowed)
 *   kv_timestamp_key / kv_signature_key  keys in a kv header (default t / v1)
 *   timestamp_header  where `{timestamp}` comes from when not in a kv header
 *   id_header         where `{id}` comes from
 *   tolerance_seconds how far the timestamp may be from now, both ways
 *                     (default 300; 0 turns the check off)
 *   secret_encoding   utf8 (default) or base64 (an optional `whsec_` is dropped)
 */
export const hmacConfig = z.object({
  encoding: z.enum(["hex", "base64"]).optional(),
  prefix: z.string().max(50).optional(),
  signed_payload: z.string().min(1).max(500).optional(),
  header_format: z.enum(["plain", "kv"]).optional(),
  kv_timestamp_key: z.string().min(1).max(50).optional(),
  kv_signature_key: z.string().min(1).max(50).optional(),
  timestamp_header: z.string().min(1).max(200).optional(),
  id_header: z.string().min(1).max(200).optional(),
  tolerance_seconds: z.number().int().min(0).max(7 * 24 * 3600).optional(),
  secret_encoding: z.enum(["utf8", "base64"]).optional(),
});
export type HmacConfig = z.infer<typeof hmacConfig>;

export const DEFAULT_TOLERANCE_SECONDS = 300;
const TOKEN = /\{(body|timestamp|id)\}/g;

type Part = { literal: Buffer } | { token: "body" | "timestamp" | "id" };

function parsePayloadTemplate(template: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  for (const m of template.matchAll(TOKEN)) {
    if (m.index > last) parts.push({ literal: Buffer.from(template.slice(last, m.index)) });
    parts.push({ token: m[1] as "body" | "timestamp" | "id" });
    last = m.index + m[0].length;
  }
  if (last < template.length) parts.push({ literal: Buffer.from(template.slice(last)) });
  return parts;
}

function usesToken(config: HmacConfig, token: string) {
  return (config.signed_payload ?? "{body}").includes(`{${token}}`);
}

function secretKey(secret: string, encoding: HmacConfig["secret_encoding"]): Buffer {
  return encoding === "base64" ? Buffer.from(secret.replace(/^whsec_/, ""), "base64") : Buffer.from(secret, "utf8");
}

/** Splits `t=123,v1=abc,v1=def` into its entries (values may themselves hold `=`). */
function parseKv(value: string): [string, string][] {
  const out: [string, string][] = [];
  for (const item of value.split(",")) {
    const eq = item.indexOf("=");
    if (eq > 0) out.push([item.slice(0, eq).trim(), item.slice(eq + 1).trim()]);
  }
  return out;
}

function hmacScheme(type: "hmac-sha256" | "hmac-sha1"): Scheme<HmacConfig> {
  const algorithm = type === "hmac-sha256" ? "sha256" : "sha1";
  return {
    type,
    defaultHeader: null,
    config: hmacConfig,
    secretProblem(secret) {
      return secret.length === 0 ? "must not be empty" : null;
    },
    settingsProblem(header, config) {
      if (!header) return "verification_header is required for hmac verification (or pick a template)";
      if (!usesToken(config, "body")) return "verification_config.signed_payload must contain {body}";
      if (usesToken(config, "timestamp") && config.header_format !== "kv" && !config.timestamp_header) {
        return "verification_config.signed_payload uses {timestamp}: set timestamp_header or header_format kv";
      }
      if (usesToken(config, "id") && !config.id_header) return "verification_config.signed_payload uses {id}: set id_header";
      return null;
    },
    prepare(secret, header, config): Verifier {
      const key = secretKey(secret, config.secret_encoding);
      const headerName = (header ?? "").toLowerCase();
      const encoding = config.encoding ?? "hex";
      const prefix = config.prefix ?? `${algorithm}=`;
      const parts = parsePayloadTemplate(config.signed_payload ?? "{body}");
      const kv = config.header_format === "kv";
      const tsKey = config.kv_timestamp_key ?? "t";
      const sigKey = config.kv_signature_key ?? "v1";
      const tsHeader = config.timestamp_header?.toLowerCase();
      const idHeader = config.id_header?.toLowerCase();
      // Only a signed timestamp is worth checking: an unsigned one can be forged.
      const needsTimestamp = parts.some((p) => "token" in p && p.token === "timestamp");
      const tolerance = config.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS;

      return (req: VerifyRequest) => {
        const value = req.headers[headerName];
        if (value === undefined || value.trim() === "") return fail(`missing signature header ${header}`);

        let candidates: string[];
        let timestamp: string | undefined;
        if (kv) {
          const entries = parseKv(value);
          candidates = entries.filter(([k]) => k === sigKey).map(([, v]) => v);
          timestamp = entries.find(([k]) => k === tsKey)?.[1];
        } else {
          const v = value.trim();
          candidates = [prefix && v.toLowerCase().startsWith(prefix.toLowerCase()) ? v.slice(prefix.length) : v];
          timestamp = tsHeader ? req.headers[tsHeader] : undefined;
        }
        if (candidates.length === 0) return fail(`no ${sigKey} signature in ${header}`);

        if (needsTimestamp) {
          const problem = timestampProblem(parseUnixSeconds(timestamp), req.nowSeconds, tolerance);
          if (problem) return fail(problem);
        }
        const id = idHeader ? req.headers[idHeader] : undefined;
        if (parts.some((p) => "token" in p && p.token === "id") && !id) return fail(`missing header ${config.id_header}`);

        const mac = createHmac(algorithm, key);
        for (const p of parts) {
          if ("literal" in p) mac.update(p.literal);
          else if (p.token === "body") mac.update(req.body);
          else mac.update(p.token === "timestamp" ? (timestamp ?? "").trim() : (id ?? ""));
        }
        const expected = mac.digest();
        for (const c of candidates) if (digestEquals(expected, decodeSignature(c, encoding))) return OK;
        return fail("signature does not match");
      };
    },
  };
}

export const hmacSha256 = hmacScheme("hmac-sha256");
export const hmacSha1 = hmacScheme("hmac-sha1");

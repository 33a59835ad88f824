import { createHmac, timingSafeEqual } from "node:crypto";
import { PORTAL_TOKEN_PREFIX } from "../contracts/portal";

/**
 * Portal link tokens: `hrp_<claims>.<mac>`, both base64url, the MAC being
 * HMAC-SHA256 over `hrp_<claims>` with a key derived from the data dir's
 * secret key (SecretBox.deriveKey). The MAC is checked without the
 * database; the generation (`gen`) is then compared with the application's
 * (checkPortalLink in src/outbound/portalLinks.ts), which revoking moves
 * on. A pure leaf (it imports
 * only contracts): the domain signs tokens, the API's auth middleware checks them.
 */
export { PORTAL_TOKEN_PREFIX };

export interface PortalClaims {
  /** Application id. */
  app: string;
  org: string;
  env: string;
  /** Expiry, Unix seconds. */
  exp: number;
  /** The application's portal generation when minted; absent in links minted before revocation existed (generation 0). */
  gen?: number;
}

export function signPortalToken(key: Uint8Array, claims: PortalClaims): string {
  const body = PORTAL_TOKEN_PREFIX + Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${body}.${mac(key, body)}`;
}

/** The token's claims when its MAC matches and it has not expired at `now`; null otherwise. */
export function verifyPortalToken(key: Uint8Array, token: string, now: Date): PortalClaims | null {
  if (!token.startsWith(PORTAL_TOKEN_PREFIX) || token.length > 2048) return null;
  const dot = token.lastIndexOf(".");
  if (dot < 0) return null;
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), "base64url");
  const expected = Buffer.from(mac(key, body), "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let claims: Partial<PortalClaims>;
  try {
    claims = JSON.parse(Buffer.from(body.slice(PORTAL_TOKEN_PREFIX.length), "base64url").toString("utf8")) as Partial<PortalClaims>;
  } catch {
    return null;
  }
  if (typeof claims.app !== "string" || typeof claims.org !== "string" || typeof claims.env !== "string" || typeof claims.exp !== "number") return null;
  if (claims.gen !== undefined && !Number.isSafeInteger(claims.gen)) return null;
  if (now.getTime() >= claims.exp * 1000) return null;
  return claims as PortalClaims;
}

function mac(key: Uint8Array, body: string): string {
  return createHmac("sha256", key).update(body).digest("base64url");
}

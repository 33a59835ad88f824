import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { PendingLogin } from "../outgoing/oidcClient";

/**
 * Between GET /v1/auth/oidc/login and the provider's redirect back, the
 * PKCE verifier, state and nonce ride in one cookie sealed with AES-256-GCM
 * under a key derived from the secret key: any node sharing that key can
 * open it, so no table and no sticky sessions are needed, and the browser
 * can neither read nor change it (docs/teams.md, "Single sign-on"). It lasts
 * ten minutes and is cleared by the callback, whatever its outcome.
 */
export const OIDC_COOKIE = "hookrelay_oidc";
export const OIDC_COOKIE_TTL_MS = 10 * 60 * 1000;
const PATH = "/v1/auth/oidc";
const PURPOSE = "oidc login state cookie";

interface Sealed extends PendingLogin {
  /** Epoch milliseconds after which the cookie is refused even if the browser still sends it. */
  exp: number;
}

export function setStateCookie(c: Context, key: Uint8Array, pending: PendingLogin, now: Date) {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const plain = JSON.stringify({ ...pending, exp: now.getTime() + OIDC_COOKIE_TTL_MS } satisfies Sealed);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  setCookie(c, OIDC_COOKIE, Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url"), {
    httpOnly: true,
    // Lax: the provider's redirect back is a top-level GET from another site, which Lax lets through and Strict would not.
    sameSite: "Lax",
    path: PATH,
    secure: isHttps(c),
    maxAge: OIDC_COOKIE_TTL_MS / 1000,
  });
}

/** The pending login, or null when the cookie is missing, altered, sealed under another key or expired. */
export function readStateCookie(c: Context, key: Uint8Array, now: Date): PendingLogin | null {
  const raw = getCookie(c, OIDC_COOKIE);
  if (!raw) return null;
  try {
    const bytes = Buffer.from(raw, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12), { authTagLength: 16 });
    decipher.setAuthTag(bytes.subarray(12, 28));
    const sealed = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8")) as Sealed;
    if (typeof sealed.exp !== "number" || sealed.exp <= now.getTime()) return null;
    if (![sealed.state, sealed.nonce, sealed.verifier].every((v) => typeof v === "string" && v.length > 0)) return null;
    return { state: sealed.state, nonce: sealed.nonce, verifier: sealed.verifier };
  } catch {
    return null;
  }
}

export function clearStateCookie(c: Context) {
  deleteCookie(c, OIDC_COOKIE, { path: PATH, secure: isHttps(c), httpOnly: true, sameSite: "Lax" });
}

export const stateCookieKey = (deriveKey: (purpose: string) => Uint8Array) => deriveKey(PURPOSE);

function isHttps(c: Context) {
  return new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
}

/**
 * A failed connection in words, once: `connection refused (ECONNREFUSED)`,
 * not Bun's `ECONNREFUSED: ECONNREFUSED: Unable to connect. Is the computer
 * able to access the url?`. The code stays, in brackets, for searching and
 * for people who know it; the words say what it means. A code without words
 * here keeps the error's own message, with the code taken out of it.
 */
const WORDS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ConnectionClosed: "connection closed before a response",
  ConnectionRefused: "connection refused",
  ECONNABORTED: "connection aborted",
  EPIPE: "connection closed while sending",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  EHOSTDOWN: "host is down",
  ENETUNREACH: "network unreachable",
  ENETDOWN: "network is down",
  EADDRNOTAVAIL: "address not available",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "DNS lookup failed temporarily",
  EAI_FAIL: "DNS lookup failed",
  ENODATA: "host has no address",
  CERT_HAS_EXPIRED: "TLS certificate expired",
  CERT_NOT_YET_VALID: "TLS certificate not yet valid",
  CERT_REVOKED: "TLS certificate revoked",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed TLS certificate",
  SELF_SIGNED_CERT_IN_CHAIN: "self-signed TLS certificate in the chain",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate cannot be verified",
  UNABLE_TO_GET_ISSUER_CERT: "TLS certificate issuer unknown",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "TLS certificate issuer unknown",
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS certificate does not match the host name",
  ERR_SSL_WRONG_VERSION_NUMBER: "TLS handshake failed (not a TLS server?)",
  ERR_TLS_HANDSHAKE_TIMEOUT: "TLS handshake timed out",
};

/** Bun's generic hints: they add nothing to the code. */
const NOISE = [/^Unable to connect\. Is the computer able to access the url\?$/i, /^The socket connection was closed unexpectedly\..*$/i];

export function describeNetworkError(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const c = typeof code === "string" && code !== "" ? code : null;
  let text = typeof message === "string" ? message.trim() : "";
  if (c) {
    // Bun repeats the code in front of its message, sometimes more than once.
    while (text.startsWith(`${c}:`)) text = text.slice(c.length + 1).trim();
    if (text.includes(c)) text = text.replace(new RegExp(`\\s*\\b${c}\\b\\s*`, "g"), " ").trim();
  }
  if (NOISE.some((re) => re.test(text))) text = "";
  const words = c ? WORDS[c] : undefined;
  if (c && words) return `${words} (${c})`;
  if (c) return text ? `${text} (${c})` : c;
  return text || "connection failed";
}

import { createHash, randomBytes } from "node:crypto";

export const sha256Hex = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");

/** A random token for keys and sessions, URL-safe. */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString("base64url");

import { randomBytes } from "node:crypto";

/** The first admin's password and its argon2id hash (the hash still being made). */
export interface AdminPassword {
  /** Only when it was generated now: printed once, never stored in plain text. */
  generatedPassword?: string;
  passwordHash: Promise<string>;
}

/**
 * Starts hashing the first admin's password (the given one, or a generated
 * one). The hash runs on Bun's own threads, so a caller can start it early
 * and do other work meanwhile; the parameters are every password's
 * (argon2id, Bun's defaults).
 */
export function hashAdminPassword(password: string | undefined): AdminPassword {
  const generatedPassword = password ? undefined : randomBytes(12).toString("base64url");
  const passwordHash = Bun.password.hash(password ?? generatedPassword!, { algorithm: "argon2id" });
  // Marked handled: a start that fails before bootstrap awaits it must not also crash on it.
  passwordHash.catch(() => {});
  return { generatedPassword, passwordHash };
}

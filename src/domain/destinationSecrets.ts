import { randomBytes } from "node:crypto";
import { and, eq, isNotNull, notLike } from "drizzle-orm";
import { jsonText } from "../contracts/common";
import { AUTH_SECRET_FIELDS, type AuthType, type SigningAlgorithm } from "../contracts/destinations";
import { AppError } from "../contracts/errors";
import { MASK } from "../contracts/notificationChannels";
import { destinations } from "../db/schema";
import { algorithmOf, generateEd25519Key, publicKeyOf } from "../outgoing/signing";
import type { Deps } from "./deps";
import type { SecretBox } from "./secrets";

/** A destination's secrets at rest: custom headers and auth_config sealed, opened for a worker, masked for the API; and its signing secret made. */

type DestinationRow = typeof destinations.$inferSelect;
type AuthConfig = Record<string, unknown>;

/**
 * Custom headers are stored sealed like the other secrets. A value written
 * before they were (plain JSON) is read as it is: `open` passes it through,
 * and sealPlainDestinationHeaders seals it at the next start.
 */
export function sealHeaders(secrets: SecretBox, headers: unknown): string | null {
  const text = jsonText(headers);
  return text === null ? null : secrets.seal(text);
}

export function openHeaders(row: DestinationRow, secrets: SecretBox, opts: { lenient: boolean }): Record<string, string> | null {
  if (!row.headers) return null;
  try {
    return JSON.parse(secrets.open(row.headers)) as Record<string, string>;
  } catch (e) {
    if (opts.lenient) return null;
    throw e;
  }
}

/** The JSON text the API returns: names kept, values masked for a read key. */
export function shownHeaders(row: DestinationRow, secrets: SecretBox, masked: boolean): string | null {
  const headers = openHeaders(row, secrets, { lenient: true });
  if (!headers) return null;
  return JSON.stringify(masked ? Object.fromEntries(Object.keys(headers).map((name) => [name, MASK])) : headers);
}

export function openAuthConfig(row: DestinationRow, secrets: SecretBox, opts: { lenient: boolean }): AuthConfig | null {
  if (!row.authConfig || row.authType === "none") return null;
  try {
    return JSON.parse(secrets.open(row.authConfig)) as AuthConfig;
  } catch (e) {
    // A listing should survive a changed secret key; a delivery must not guess.
    if (opts.lenient) return null;
    throw e;
  }
}

/** Standard Webhooks secret: 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The key a destination or endpoint signs with: the one given, which must be
 * of the algorithm's kind (whsec_ for hmac-sha256, whsk_ for ed25519), or a
 * new one. Without an algorithm, a given key's prefix chooses it.
 */
export function signingKeyFor(algorithm: SigningAlgorithm | undefined, given: string | undefined, field: string): { algorithm: SigningAlgorithm; key: string } {
  if (given === undefined) {
    const chosen = algorithm ?? "hmac-sha256";
    return { algorithm: chosen, key: chosen === "ed25519" ? generateEd25519Key() : generateSigningSecret() };
  }
  const kind = algorithmOf(given);
  if (algorithm && kind !== algorithm) {
    throw new AppError("validation_error", `A ${kind} key cannot sign for signing_algorithm ${algorithm}`, [
      { field: `body.${field}`, message: algorithm === "ed25519" ? "must be a whsk_ key for ed25519" : "must be a whsec_ secret for hmac-sha256" },
    ]);
  }
  return { algorithm: kind, key: given };
}

/** The public key receivers verify `v1a` signatures with; an HMAC secret has none (409: there is nothing public to read). */
export function publicKeyOfRow(row: Pick<DestinationRow, "signingAlgorithm" | "signingSecret">, secrets: SecretBox, what: string) {
  if (row.signingAlgorithm !== "ed25519") {
    throw new AppError("conflict", `This ${what} signs with ${row.signingAlgorithm}, a shared secret: it has no public key (set signing_algorithm to ed25519)`);
  }
  return { public_key: publicKeyOf(secrets.open(row.signingSecret)), algorithm: "ed25519" as const };
}

export function maskedAuthConfig(row: DestinationRow, secrets: SecretBox): string | null {
  const config = openAuthConfig(row, secrets, { lenient: true });
  if (!config) return null;
  const hidden = AUTH_SECRET_FIELDS[row.authType as AuthType] ?? [];
  return JSON.stringify(Object.fromEntries(Object.entries(config).filter(([k]) => !hidden.includes(k))));
}

/**
 * Seals the custom headers of destinations stored before headers were
 * secrets (plain JSON text): run once as serve starts, on either store. A
 * row changed meanwhile (by another node, or a PATCH) is left to the writer
 * that changed it, which sealed it already.
 */
export async function sealPlainDestinationHeaders({ db, secrets }: Pick<Deps, "db" | "secrets">): Promise<number> {
  const plain = await db
    .select({ id: destinations.id, headers: destinations.headers })
    .from(destinations)
    .where(and(isNotNull(destinations.headers), notLike(destinations.headers, "enc:%")));
  let sealed = 0;
  for (const row of plain) {
    const updated = await db
      .update(destinations)
      .set({ headers: secrets.seal(row.headers!) })
      .where(and(eq(destinations.id, row.id), eq(destinations.headers, row.headers!)))
      .returning({ id: destinations.id });
    sealed += updated.length;
  }
  return sealed;
}

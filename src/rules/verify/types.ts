import type { z } from "zod";
import type { VerificationType } from "../../contracts/sources";

/** What a scheme sees of a request: nothing it needs is re-read or re-parsed per scheme. */
export interface VerifyRequest {
  method: string;
  /** The public URL the provider called (base URL + path + query): Twilio signs it. */
  url: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
  /** The raw body, exactly as received. */
  body: Uint8Array;
  contentType: string | null;
  nowSeconds: number;
}

export type VerifyResult = { ok: true } | { ok: false; error: string };

/** A verifier with its key material already derived: called once per request. */
export type Verifier = (req: VerifyRequest) => VerifyResult;

/**
 * One signature mechanism. Providers are not code paths: a template is a
 * scheme plus a header and a config (see ../templates.ts).
 */
export interface Scheme<C> {
  type: VerificationType;
  /** Header carrying the signature when the source names none. */
  defaultHeader: string | null;
  /** Checked when a source is saved (400 on failure) and parsed when it is loaded. */
  config: z.ZodType<C>;
  /** Why a secret cannot work with this scheme (e.g. not base64), or null. */
  secretProblem(secret: string): string | null;
  /** Problems of the header/config combination beyond the config's own schema. */
  settingsProblem(header: string | null, config: C): string | null;
  prepare(secret: string, header: string | null, config: C): Verifier;
}

export const fail = (error: string): VerifyResult => ({ ok: false, error });
export const OK: VerifyResult = { ok: true };

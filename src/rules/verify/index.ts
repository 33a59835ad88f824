import type { VerificationType } from "../../contracts/sources";
import { hmacSha1, hmacSha256 } from "./hmac";
import { standardWebhooks } from "./standardWebhooks";
import { token } from "./token";
import { twilio } from "./twilio";
import type { Scheme, Verifier } from "./types";
import { zodProblems } from "../../contracts/errors";

export type { Verifier, VerifyRequest, VerifyResult } from "./types";

const schemes: Record<VerificationType, Scheme<any>> = {
  "hmac-sha256": hmacSha256,
  "hmac-sha1": hmacSha1,
  "standard-webhooks": standardWebhooks,
  twilio,
  token,
};

export function schemeFor(type: VerificationType): Scheme<unknown> {
  return schemes[type];
}

/** One problem with a verification setup, named by the source field it concerns. */
export interface SettingsProblem {
  field: string;
  message: string;
}

/** Everything wrong with a verification setup, checked when a source is saved. */
export function verificationProblems(type: VerificationType, secret: string | null, header: string | null, config: unknown): SettingsProblem[] {
  const scheme = schemes[type];
  const parsed = scheme.config.safeParse(config ?? {});
  if (!parsed.success) {
    return zodProblems(parsed.error, ["verification_config"]);
  }
  const problems: SettingsProblem[] = [];
  const settings = scheme.settingsProblem(header ?? scheme.defaultHeader, parsed.data);
  if (settings) problems.push({ field: settings.startsWith("verification_config") ? "verification_config" : "verification_header", message: settings });
  if (secret !== null) {
    const s = scheme.secretProblem(secret);
    if (s) problems.push({ field: "verification_secret", message: s });
  }
  return problems;
}

/** A ready verifier for a saved (already checked) setup. */
export function buildVerifier(type: VerificationType, secret: string, header: string | null, config: unknown): Verifier {
  const scheme = schemes[type];
  const parsed = scheme.config.parse(config ?? {});
  return scheme.prepare(secret, header ?? scheme.defaultHeader, parsed);
}

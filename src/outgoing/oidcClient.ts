import * as oidc from "openid-client";
import type { OidcSettings } from "../config/oidc";

/**
 * The client side of single sign-on (docs/teams.md, "Single sign-on"):
 * discovery, the authorization request (code flow, PKCE S256, state, nonce)
 * and the callback's code exchange. openid-client (a certified relying
 * party library) checks the ID token's signature, issuer, audience, expiry
 * and nonce; this file only keeps the provider's metadata and says, when
 * something fails, whether the provider is down or the sign-in is bad.
 * Its requests go only to the issuer the operator configured (often on a
 * private network), not through the guarded sender (./sender.ts) meant for
 * user-given URLs.
 */

/** What the browser must bring back to the callback: kept in a sealed cookie (src/api/oidcStateCookie.ts), never in a table. */
export interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
}

/** The identity the provider vouched for: ID token claims, completed by userinfo. */
export type ProviderClaims = Record<string, unknown> & { sub: string };

/** The provider could not be reached, or answered something that is not a provider's answer (502/503). */
export class ProviderUnavailable extends Error {
  constructor(
    message: string,
    readonly status: 502 | 503,
  ) {
    super(message);
  }
}

/** The sign-in itself is refused: the provider said no, or its answer does not check out (400). */
export class SignInRejected extends Error {}

const TIMEOUT_SECONDS = 10;

export interface OidcClient {
  /** The provider's authorization URL to send the browser to, and what the callback must be given back. */
  start(redirectUri: string): Promise<{ url: string; pending: PendingLogin }>;
  /** Checks the callback (its full URL as the provider redirected to it) and returns the claims. */
  finish(callbackUrl: URL, pending: PendingLogin): Promise<ProviderClaims>;
}

export function createOidcClient(settings: OidcSettings): OidcClient {
  // Discovered once and kept; a failed discovery is forgotten, so the next sign-in tries again.
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    discovered ??= discover(settings).catch((err) => {
      discovered = undefined;
      throw err;
    });
    return discovered;
  };

  return {
    async start(redirectUri) {
      const config = await configuration();
      const pending: PendingLogin = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: settings.scopes,
        response_type: "code",
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
        code_challenge_method: "S256",
        state: pending.state,
        nonce: pending.nonce,
      });
      return { url: url.href, pending };
    },

    async finish(callbackUrl, pending) {
      const config = await configuration();
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
      } catch (err) {
        throw classify(err, "the code exchange");
      }
      const idClaims = tokens.claims();
      if (!idClaims) throw new SignInRejected("the provider returned no ID token");
      let userinfo: Record<string, unknown> = {};
      // Many providers (Authelia, oidc-provider) put email and groups in userinfo only, not in the ID token of a code flow.
      if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
        try {
          userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        } catch (err) {
          throw classify(err, "userinfo");
        }
      }
      return { ...idClaims, ...userinfo, sub: idClaims.sub };
    },
  };
}

async function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  const issuer = new URL(settings.issuer);
  try {
    return await oidc.discovery(issuer, settings.clientId, settings.clientSecret, settings.clientSecret ? undefined : oidc.None(), {
      timeout: TIMEOUT_SECONDS,
      // Plain HTTP is the operator's choice (a provider on the same host or private network); openid-client refuses it unless told.
      execute: issuer.protocol === "http:" ? [oidc.allowInsecureRequests] : [],
    });
  } catch (err) {
    const classified = classify(err, "discovery");
    // Whatever the provider answered, a failed discovery means no sign-in can start: it is the provider's side.
    throw classified instanceof ProviderUnavailable ? classified : new ProviderUnavailable(classified.message, 502);
  }
}

/** Down (no answer, a timeout, a 5xx) is the provider's state; anything the provider said or signed that does not check out rejects this sign-in. */
function classify(err: unknown, step: string): Error {
  if (err instanceof oidc.AuthorizationResponseError) return new SignInRejected(`the provider answered ${err.error}${err.error_description ? `: ${err.error_description}` : ""}`);
  if (err instanceof oidc.ResponseBodyError) {
    // invalid_client: our client id or secret is wrong, the operator's to fix, not the user's.
    if (err.error === "invalid_client" || err.status >= 500) return new ProviderUnavailable(`${step}: the provider answered ${err.status} ${err.error}${err.error_description ? ` (${err.error_description})` : ""}`, 502);
    return new SignInRejected(`${step}: the provider answered ${err.error}${err.error_description ? `: ${err.error_description}` : ""}`);
  }
  if (err instanceof oidc.ClientError) {
    if (err.code === "OAUTH_TIMEOUT") return new ProviderUnavailable(`${step}: the provider did not answer within ${TIMEOUT_SECONDS} s`, 503);
    if (err.code === "OAUTH_RESPONSE_IS_NOT_CONFORM" || err.code === "OAUTH_RESPONSE_IS_NOT_JSON") return new ProviderUnavailable(`${step}: the provider's answer is not what OpenID Connect expects (${err.message}${statusOf(err)})`, 502);
    return new SignInRejected(`${step}: ${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ""}`);
  }
  if (err instanceof oidc.WWWAuthenticateChallengeError) return new ProviderUnavailable(`${step}: the provider refused our access token (${err.message})`, 502);
  // fetch itself failed: refused, reset, DNS, TLS.
  return new ProviderUnavailable(`${step}: the provider cannot be reached (${err instanceof Error ? err.message : String(err)})`, 503);
}

function statusOf(err: oidc.ClientError): string {
  const cause = err.cause as { status?: number } | undefined;
  return cause && typeof cause.status === "number" ? `, HTTP ${cause.status}` : "";
}

import type { Server } from "node:http";
import { createServer } from "node:net";
import Provider from "oidc-provider";

/**
 * A real OpenID Connect provider for single sign-on tests: `oidc-provider`
 * (a certified implementation) on 127.0.0.1, with one confidential client
 * registered for hookrelay's redirect URI and accounts whose claims the
 * test sets (and may change between sign-ins). Sign-in goes through the
 * provider's own development login page, in a browser or programmatically
 * (`signIn`); consent is granted in advance, as for a first-party client.
 */

export interface TestAccount {
  email: string;
  email_verified: boolean;
  name?: string;
  groups?: string[];
}

export interface OidcTestProvider {
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  /** accountId (what one types as "login" on the provider's page) → claims. */
  accounts: Map<string, TestAccount>;
  /**
   * Follows an authorization URL through the provider's login page as
   * `accountId`; returns the URL the provider redirects back to (the
   * callback with its code and state, or its error).
   */
  signIn(authorizationUrl: string, accountId: string): Promise<URL>;
  stop(): Promise<void>;
}

export const OIDC_CLIENT = { id: "hookrelay", secret: "test-client-secret-that-is-long-enough-0123456789" };

/** A port nothing listens on yet: the issuer URL must be known before the server that the provider redirects to starts. */
export function reservePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startOidcProvider(opts: { port: number; redirectUri: string; accounts?: Record<string, TestAccount> }): Promise<OidcTestProvider> {
  const issuer = `http://127.0.0.1:${opts.port}`;
  const accounts = new Map(Object.entries(opts.accounts ?? {}));
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: OIDC_CLIENT.id,
        client_secret: OIDC_CLIENT.secret,
        redirect_uris: [opts.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    scopes: ["openid", "email", "profile", "groups"],
    cookies: { keys: ["hookrelay-test-cookie-key"] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    findAccount: async (_ctx, id) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...accounts.get(id)! }) };
    },
    // Consent is granted in advance: the provider's page asks only who signs in.
    loadExistingGrant: async (ctx) => {
      const existing = ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope("openid email profile groups");
      await grant.save();
      return grant;
    },
  });
  const server: Server = await new Promise((resolve) => {
    const s = provider.listen(opts.port, "127.0.0.1", () => resolve(s));
  });

  return {
    issuer,
    port: opts.port,
    clientId: OIDC_CLIENT.id,
    clientSecret: OIDC_CLIENT.secret,
    accounts,
    async signIn(authorizationUrl, accountId) {
      const jar = new Map<string, string>();
      const go = async (url: string, init: RequestInit = {}): Promise<Response> => {
        const res = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
        for (const c of res.headers.getSetCookie()) {
          const [pair] = c.split(";");
          const at = pair!.indexOf("=");
          const name = pair!.slice(0, at);
          const value = pair!.slice(at + 1);
          if (value === "" || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(name);
          else jar.set(name, value);
        }
        return res;
      };
      let res = await go(authorizationUrl);
      for (let hops = 0; hops < 10; hops++) {
        const location = res.headers.get("location");
        if (!location) throw new Error(`the provider stopped at ${res.status}: ${(await res.text()).slice(0, 500)}`);
        const next = new URL(location, issuer);
        if (next.origin !== issuer) return next;
        if (/^\/interaction\/[^/]+$/.test(next.pathname)) {
          await go(next.href);
          res = await go(next.href, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ prompt: "login", login: accountId, password: "any" }).toString() });
        } else res = await go(next.href);
      }
      throw new Error("the provider redirected more than ten times");
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

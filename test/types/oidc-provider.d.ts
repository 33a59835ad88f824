// oidc-provider ships no types and @types/oidc-provider lags its major version:
// the little test/helpers/oidcProvider.ts uses of it, typed by hand.
declare module "oidc-provider" {
  import type { Server } from "node:http";

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface GrantClass {
    new (init: { clientId: string; accountId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }
  interface OidcContext {
    oidc: {
      client?: { clientId: string };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      provider: { Grant: GrantClass };
    };
  }
  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }
  interface Configuration {
    clients?: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    scopes?: string[];
    cookies?: { keys: string[] };
    pkce?: { required: () => boolean };
    features?: Record<string, { enabled: boolean }>;
    findAccount?: (ctx: OidcContext, id: string) => Promise<Account | undefined>;
    loadExistingGrant?: (ctx: OidcContext) => Promise<Grant | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    listen(port: number, host: string, callback: () => void): Server;
  }
}

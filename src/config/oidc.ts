import { roles, type Role } from "../contracts/roles";
import { ConfigError } from "./errors";

/**
 * Single sign-on with an OpenID Connect provider (docs/teams.md, "Single
 * sign-on"): the options as the server uses them, parsed and checked
 * together (a half configuration fails at start-up, not at the first login).
 */
export interface OidcSettings {
  /** The provider's issuer identifier, exactly as its discovery document states it. */
  issuer: string;
  clientId: string;
  /** None: a public client (PKCE alone authenticates the exchange). */
  clientSecret?: string;
  /** The login button says "Sign in with {name}". */
  name: string;
  scopes: string;
  /** Lower-case email domains allowed to sign in; empty: any. */
  allowedDomains: string[];
  /** The role an unknown user gets in the instance's first organization; none: unknown users are refused. */
  autoProvisionRole?: Role;
  /** The claim (in the ID token or userinfo) whose values the role map reads. */
  roleClaim?: string;
  roleMap: RoleMapping[];
}

export interface RoleMapping {
  value: string;
  role: Role;
}

/** An issuer is compared to the provider's own by exact string: only surrounding spaces are dropped, a trailing slash is kept. */
export const issuerOption = (raw: string): string | undefined => {
  const v = raw.trim();
  if (v === "") return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(`OIDC issuer must be an http(s) URL, got "${raw}"`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw new ConfigError(`OIDC issuer must be an http(s) URL, got "${raw}"`);
  return v;
};

export const scopesOption = (raw: string): string => {
  const scopes = raw.split(/[\s,]+/).filter(Boolean);
  if (!scopes.includes("openid")) throw new ConfigError(`OIDC scopes must include openid, got "${raw}"`);
  if (!scopes.includes("email")) throw new ConfigError(`OIDC scopes must include email (sign-in matches users by their verified email), got "${raw}"`);
  return scopes.join(" ");
};

/** Printed by `config print` as the operator wrote it, normalized; undefined: any domain. */
export const domainsOption = (raw: string): string[] | undefined => {
  const domains = raw
    .split(",")
    .map((d) => d.trim().toLowerCase().replace(/^@/, ""))
    .filter(Boolean);
  for (const d of domains) if (!/^[a-z0-9.-]+\.[a-z0-9-]+$/.test(d)) throw new ConfigError(`OIDC allowed domains must be a comma list of domains such as example.com, got "${d}"`);
  return domains.length > 0 ? domains : undefined;
};

/** Owner is not offered: anyone with an address of an allowed domain would own the organization. */
const provisionable = roles.filter((r) => r !== "owner");
export const provisionRoleOption = (raw: string): Role | undefined => {
  const v = raw.trim().toLowerCase();
  if (v === "" || v === "off") return undefined;
  if (!(provisionable as readonly string[]).includes(v)) throw new ConfigError(`OIDC auto-provision role must be off or one of ${provisionable.join(", ")}, got "${raw}"`);
  return v as Role;
};

/**
 * `hookrelay-admins:admin,platform:developer`: a value may itself hold colons
 * (the role is after the last one). The option keeps the text, checked and
 * normalized, so `config print` shows it as written; `oidcSettings` reads it.
 */
export const roleMapOption = (raw: string): string | undefined => {
  const map = parseRoleMap(raw);
  return map.length > 0 ? map.map((m) => `${m.value}:${m.role}`).join(",") : undefined;
};

export const parseRoleMap = (raw: string): RoleMapping[] => {
  const out: RoleMapping[] = [];
  for (const pair of raw.split(",").map((p) => p.trim()).filter(Boolean)) {
    const at = pair.lastIndexOf(":");
    const value = pair.slice(0, at).trim();
    const role = pair.slice(at + 1).trim().toLowerCase();
    if (at <= 0 || value === "" || !(roles as readonly string[]).includes(role)) {
      throw new ConfigError(`OIDC role map must be a comma list of value:role (role one of ${roles.join(", ")}), e.g. hookrelay-admins:admin,platform:developer; got "${pair}"`);
    }
    out.push({ value, role: role as Role });
  }
  return out;
};

interface OidcOptions {
  oidcIssuer?: string;
  oidcClientId?: string;
  oidcClientSecret?: string;
  oidcName: string;
  oidcScopes: string;
  oidcAllowedDomains?: string[];
  oidcAutoProvisionRole?: Role;
  oidcRoleClaim?: string;
  oidcRoleMap?: string;
  passwordLogin: boolean;
}

/** The settings, or undefined when single sign-on is not configured; throws on a half configuration. */
export function oidcSettings(o: OidcOptions): OidcSettings | undefined {
  if (o.oidcIssuer && !o.oidcClientId) throw new ConfigError("HOOKRELAY_OIDC_ISSUER is set but HOOKRELAY_OIDC_CLIENT_ID is not: single sign-on needs both");
  if (!o.oidcIssuer) {
    const stray = o.oidcClientId ? "HOOKRELAY_OIDC_CLIENT_ID" : o.oidcClientSecret ? "HOOKRELAY_OIDC_CLIENT_SECRET" : o.oidcRoleClaim ? "HOOKRELAY_OIDC_ROLE_CLAIM" : o.oidcRoleMap ? "HOOKRELAY_OIDC_ROLE_MAP" : o.oidcAutoProvisionRole ? "HOOKRELAY_OIDC_AUTO_PROVISION_ROLE" : o.oidcAllowedDomains ? "HOOKRELAY_OIDC_ALLOWED_DOMAINS" : undefined;
    if (stray) throw new ConfigError(`${stray} is set but HOOKRELAY_OIDC_ISSUER is not: single sign-on needs the provider's issuer URL`);
    if (!o.passwordLogin) throw new ConfigError("HOOKRELAY_PASSWORD_LOGIN=off needs single sign-on (HOOKRELAY_OIDC_ISSUER and HOOKRELAY_OIDC_CLIENT_ID): nobody could sign in");
    return undefined;
  }
  if (o.oidcRoleMap && !o.oidcRoleClaim) throw new ConfigError("HOOKRELAY_OIDC_ROLE_MAP is set but HOOKRELAY_OIDC_ROLE_CLAIM is not: name the claim it reads (e.g. groups)");
  if (o.oidcRoleClaim && !o.oidcRoleMap) throw new ConfigError("HOOKRELAY_OIDC_ROLE_CLAIM is set but HOOKRELAY_OIDC_ROLE_MAP is not: map its values to roles (e.g. hookrelay-admins:admin)");
  return {
    issuer: o.oidcIssuer,
    clientId: o.oidcClientId!,
    clientSecret: o.oidcClientSecret,
    name: o.oidcName.trim() || "SSO",
    scopes: o.oidcScopes,
    allowedDomains: o.oidcAllowedDomains ?? [],
    autoProvisionRole: o.oidcAutoProvisionRole,
    roleClaim: o.oidcRoleClaim,
    roleMap: o.oidcRoleMap ? parseRoleMap(o.oidcRoleMap) : [],
  };
}

/** The single sign-on options (docs/teams.md, "Single sign-on"): parsed, checked together, the secret never printed. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config";
import { explainConfig, REDACTED } from "../../src/config/explain";
import { oidcSettings } from "../../src/config/oidc";

const SSO = { HOOKRELAY_OIDC_ISSUER: "https://sso.example.com/realms/acme/", HOOKRELAY_OIDC_CLIENT_ID: "hookrelay", HOOKRELAY_OIDC_CLIENT_SECRET: "s3cret-value" };

function refusal(env: Record<string, string>): string {
  try {
    loadConfig({}, env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).message).not.toContain("\n");
    return (e as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe("HOOKRELAY_OIDC_* options", () => {
  it("are off by default, with password login on", () => {
    const c = loadConfig({}, {});
    expect(oidcSettings(c)).toBeUndefined();
    expect(c.passwordLogin).toBe(true);
    expect(c.oidcName).toBe("SSO");
    expect(c.oidcScopes).toBe("openid email profile");
  });

  it("parse into the settings sign-in uses, the issuer kept exactly (a trailing slash is part of it)", () => {
    const c = loadConfig({}, {
      ...SSO,
      HOOKRELAY_OIDC_NAME: "Acme SSO",
      HOOKRELAY_OIDC_SCOPES: "openid,email profile groups",
      HOOKRELAY_OIDC_ALLOWED_DOMAINS: "Example.com, @acme.io",
      HOOKRELAY_OIDC_AUTO_PROVISION_ROLE: "Developer",
      HOOKRELAY_OIDC_ROLE_CLAIM: "groups",
      HOOKRELAY_OIDC_ROLE_MAP: "hookrelay-admins:admin, platform:developer, urn:acme:ops:owner",
      HOOKRELAY_PASSWORD_LOGIN: "off",
    });
    expect(oidcSettings(c)).toEqual({
      issuer: "https://sso.example.com/realms/acme/",
      clientId: "hookrelay",
      clientSecret: "s3cret-value",
      name: "Acme SSO",
      scopes: "openid email profile groups",
      allowedDomains: ["example.com", "acme.io"],
      autoProvisionRole: "developer",
      roleClaim: "groups",
      roleMap: [
        { value: "hookrelay-admins", role: "admin" },
        { value: "platform", role: "developer" },
        { value: "urn:acme:ops", role: "owner" },
      ],
    });
    expect(c.passwordLogin).toBe(false);
  });

  it("refuse a half configuration at start-up, saying what is missing", () => {
    expect(refusal({ HOOKRELAY_OIDC_ISSUER: SSO.HOOKRELAY_OIDC_ISSUER })).toMatch(/HOOKRELAY_OIDC_CLIENT_ID is not/);
    expect(refusal({ HOOKRELAY_OIDC_CLIENT_ID: "hookrelay" })).toMatch(/HOOKRELAY_OIDC_ISSUER is not/);
    expect(refusal({ HOOKRELAY_PASSWORD_LOGIN: "off" })).toMatch(/needs single sign-on/);
    expect(refusal({ ...SSO, HOOKRELAY_OIDC_ROLE_MAP: "a:admin" })).toMatch(/HOOKRELAY_OIDC_ROLE_CLAIM is not/);
    expect(refusal({ ...SSO, HOOKRELAY_OIDC_ROLE_CLAIM: "groups" })).toMatch(/HOOKRELAY_OIDC_ROLE_MAP is not/);
  });

  it("refuse bad values with a one-line reason", () => {
    expect(refusal({ ...SSO, HOOKRELAY_OIDC_ISSUER: "sso.example.com" })).toMatch(/issuer must be an http\(s\) URL/);
    expect(refusal({ ...SSO, HOOKRELAY_OIDC_SCOPES: "email profile" })).toMatch(/must include openid/);
    expect(refusal({ ...SSO, HOOKRELAY_OIDC_AUTO_PROVISION_ROLE: "owner" })).toMatch(/off or one of viewer, developer, admin/);
    expect(refusal({ ...SSO, HOOKRELAY_OIDC_ROLE_CLAIM: "groups", HOOKRELAY_OIDC_ROLE_MAP: "admins:root" })).toMatch(/value:role/);
    expect(refusal({ ...SSO, HOOKRELAY_OIDC_ALLOWED_DOMAINS: "not a domain" })).toMatch(/allowed domains/);
    expect(refusal({ ...SSO, HOOKRELAY_PASSWORD_LOGIN: "sometimes" })).toMatch(/password login must be true or false/);
  });

  it("never print the client secret in config print", () => {
    const explained = explainConfig({}, SSO);
    expect(explained.oidcClientSecret).toMatchObject({ value: REDACTED, redacted: true, env: "HOOKRELAY_OIDC_CLIENT_SECRET" });
    expect(JSON.stringify(explained)).not.toContain("s3cret-value");
    expect(explained.oidcIssuer!.value).toBe(SSO.HOOKRELAY_OIDC_ISSUER);
    const mapped = explainConfig({}, { ...SSO, HOOKRELAY_OIDC_ROLE_CLAIM: "groups", HOOKRELAY_OIDC_ROLE_MAP: "admins: Admin, platform:developer", HOOKRELAY_OIDC_ALLOWED_DOMAINS: "Example.com" });
    expect(mapped.oidcRoleMap!.value).toBe("admins:admin,platform:developer");
    expect(mapped.oidcAllowedDomains!.value).toEqual(["example.com"]);
  });
});

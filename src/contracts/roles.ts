import { z } from "zod";

/**
 * A member's role in an organization, weakest first (docs/teams.md): each
 * may do all the one before it may, and more.
 */
export const roles = ["viewer", "developer", "admin", "owner"] as const;
// Pure, so the admin UI (which imports can()) bundles no zod.
export const role = /* @__PURE__ */ z.enum(roles);
export type Role = z.infer<typeof role>;

/** The weakest role each kind of operation needs (docs/teams.md, "Who may do what"). */
export const needs = {
  /** Every resource of the organization's environments, but no secret in full. */
  read: "viewer",
  /** A verification or signing secret in full: with one a caller could forge webhooks. */
  readSecrets: "developer",
  /** Relay resources, retries, replays, messages, API keys for oneself. */
  write: "developer",
  /** Every member's API keys, environments, members below owner, the audit log. */
  administer: "admin",
  /** Owners, and deleting the organization. */
  own: "owner",
} as const satisfies Record<string, Role>;
export type Permission = keyof typeof needs;

export function rank(r: Role): number {
  return roles.indexOf(r);
}

/** Whether `r` may do what `permission` needs. */
export function can(r: Role, permission: Permission): boolean {
  return rank(r) >= rank(needs[permission]);
}

/** The weaker of two roles: a key acts with at most its member's role. */
export function weaker(a: Role, b: Role): Role {
  return rank(a) <= rank(b) ? a : b;
}

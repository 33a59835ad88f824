/**
 * What the signed-in member may do, to show only the buttons they can use.
 * The order and the rule are src/contracts/roles.ts's (the server decides;
 * this only hides): written out here so the UI bundle does not carry zod.
 */
import type { Role } from "../../src/contracts/roles";

export const ROLES: readonly Role[] = ["viewer", "developer", "admin", "owner"];

/** Whether `role` is `least` or stronger. */
export const atLeast = (role: Role, least: Role) => ROLES.indexOf(role) >= ROLES.indexOf(least);

/** src/contracts/account.ts MIN_PASSWORD_LENGTH. */
export const MIN_PASSWORD_LENGTH = 12;

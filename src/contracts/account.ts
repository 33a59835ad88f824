import { z } from "zod";

/** A signed-in user's own account: password, sessions, one-time links (docs/teams.md). */

import { MIN_PASSWORD_LENGTH } from "./passwords";

export { MIN_PASSWORD_LENGTH };
const newPassword = z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`).max(1000);

export const changePasswordInput = z.object({ current_password: z.string().min(1).max(1000), new_password: newPassword });

/** Spends a one-time link (an invite, or a password reset printed by `hookrelay users reset-password`) and signs in. */
export const acceptInviteInput = z.object({ token: z.string().min(1).max(200), password: newPassword, name: z.string().trim().min(1).max(200).optional() });

export const accountSession = z.object({
  id: z.string(),
  method: z.enum(["password", "oidc"]),
  created_at: z.string(),
  expires_at: z.string(),
  last_used_at: z.string().nullable(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  /** The session this request came with. */
  current: z.boolean(),
});
export const accountSessionList = z.object({ sessions: z.array(accountSession) });

/** What the login page offers (public). */
export const loginMethods = z.object({
  password: z.boolean(),
  /** Single sign-on, when configured: the button's label and where it starts. */
  oidc: z.object({ name: z.string(), login_url: z.string() }).nullable(),
});

/** POST /v1/auth/password: the other sessions it ended (the one that asked stays signed in). */
export const passwordChanged = z.object({ success: z.literal(true), sessions_ended: z.number().int() });

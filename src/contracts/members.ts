import { z } from "zod";
import { role } from "./roles";

/** Members of the caller's organization and their roles (docs/teams.md). */

export const memberStatus = z.enum(["invited", "active", "disabled"]);

export const member = z.object({
  user_id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  role,
  status: memberStatus,
  last_login_at: z.string().nullable(),
  created_at: z.string(),
});
export type MemberDto = z.infer<typeof member>;

export const memberList = z.object({ members: z.array(member) });
export const memberBody = z.object({ member });

export const addMemberInput = z.object({
  email: z.string().trim().toLowerCase().email().max(320),
  role,
  name: z.string().trim().min(1).max(200).optional(),
});
export type AddMemberInput = z.infer<typeof addMemberInput>;

/** `invite_url`: a one-time link for 7 days, null when the user already had an account (they are added at once). */
export const addedMember = z.object({ member, invite_url: z.string().nullable() });

export const updateMemberInput = z.object({ role: role.optional(), disabled: z.boolean().optional() });
export type UpdateMemberInput = z.infer<typeof updateMemberInput>;

export const memberParam = z.object({ user_id: z.string().describe("The member's user id") });

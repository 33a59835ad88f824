import { z } from "zod";
import { role } from "./roles";

/** Organizations: a team's whole space, with its members and environments (docs/teams.md). */

const fields = {
  name: z.string().trim().min(1).max(200),
  slug: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, "lower-case letters, digits, '.', '-' and '_', at most 100"),
};

export const createOrganizationInput = z.object({ name: fields.name, slug: fields.slug.optional() });
export type CreateOrganizationInput = z.input<typeof createOrganizationInput>;

export const updateOrganizationInput = z.object(fields).partial();
export type UpdateOrganizationInput = z.input<typeof updateOrganizationInput>;

export const deleteOrganizationQuery = z.object({
  force: z
    .enum(["true", "false"])
    .optional()
    .describe("true: delete the organization with everything it holds; otherwise one whose environments hold resources is refused (409)"),
});

export const organization = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  /** The caller's role in it (null: the instance's owner, looking at one they are no member of). */
  role: role.nullable(),
});
export type OrganizationDto = z.infer<typeof organization>;

export const organizationBody = z.object({ organization });
export const organizationList = z.object({ organizations: z.array(organization) });
export const organizationParam = z.object({ id: z.string().describe("Organization id") });

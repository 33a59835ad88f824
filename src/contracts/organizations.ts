import { z } from "zod";
import { forceDeleteQuery, placeFields } from "./common";
import { role } from "./roles";

/** Organizations: a team's whole space, with its members and environments (docs/teams.md). */

const fields = placeFields;

export const createOrganizationInput = z.object({ name: fields.name, slug: fields.slug.optional() });
export type CreateOrganizationInput = z.input<typeof createOrganizationInput>;

export const updateOrganizationInput = z.object(fields).partial();
export type UpdateOrganizationInput = z.input<typeof updateOrganizationInput>;

export const deleteOrganizationQuery = forceDeleteQuery("organization");

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

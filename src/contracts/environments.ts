import { z } from "zod";
import { forceDeleteQuery, placeFields } from "./common";

/** Environments: an organization's separate spaces; every resource lives in one (docs/decisions.md D1). */

const fields = placeFields;

export const createEnvironmentInput = z.object({ name: fields.name, slug: fields.slug.optional() });
export type CreateEnvironmentInput = z.input<typeof createEnvironmentInput>;

export const updateEnvironmentInput = z.object(fields).partial();
export type UpdateEnvironmentInput = z.input<typeof updateEnvironmentInput>;

export const deleteEnvironmentQuery = forceDeleteQuery("environment");

export const environment = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  slug: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EnvironmentDto = z.infer<typeof environment>;

export const environmentBody = z.object({ environment });
export const environmentList = z.object({ environments: z.array(environment) });
export const environmentParam = z.object({ id: z.string().describe("Environment id") });

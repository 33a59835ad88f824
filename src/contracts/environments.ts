import { z } from "zod";

/** Environments: an organization's separate spaces; every resource lives in one (docs/decisions.md D1). */

const fields = {
  name: z.string().trim().min(1).max(200),
  slug: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, "lower-case letters, digits, '.', '-' and '_', at most 100"),
};

export const createEnvironmentInput = z.object({ name: fields.name, slug: fields.slug.optional() });
export type CreateEnvironmentInput = z.input<typeof createEnvironmentInput>;

export const updateEnvironmentInput = z.object(fields).partial();
export type UpdateEnvironmentInput = z.input<typeof updateEnvironmentInput>;

export const deleteEnvironmentQuery = z.object({
  force: z
    .enum(["true", "false"])
    .optional()
    .describe("true: delete the environment with everything it holds; otherwise an environment holding resources is refused (409)"),
});

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

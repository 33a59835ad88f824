import { z } from "zod";
import { role } from "./roles";

export const createApiKeyInput = z.object({
  name: z.string().trim().min(1).max(200),
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  scopes: z.enum(["*", "read"]).optional(),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeyInput>;

export const apiKey = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string(),
  scopes: z.string().nullable(),
  request_count: z.number().int(),
  revoked: z.number().int(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  org_id: z.string(),
  env_id: z.string(),
  /** The member the key belongs to (it acts with at most their role); null for a key made before keys had a member. */
  user_id: z.string().nullable(),
  user_email: z.string().nullable(),
});

export const createdApiKey = z.object({
  id: z.string(),
  name: z.string(),
  key: z.string(),
  key_prefix: z.string(),
  scopes: z.string().nullable(),
  created_at: z.string(),
});

export const apiKeyList = z.object({ api_keys: z.array(apiKey) });

export const loginInput = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1000) });
export const userBody = z.object({ user: z.object({ id: z.string(), email: z.string() }) });
export const meBody = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string().nullable() }).nullable(),
  /** What the caller may do here (src/contracts/roles.ts): a session's member role, a key's effective one. */
  role,
  /** Whether the caller acts for the instance's owner (organizations, backups, cluster). */
  instance_owner: z.boolean(),
  organization: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
  org_id: z.string(),
  env_id: z.string(),
  org_name: z.string(),
  env_name: z.string(),
  /** The environment the caller acts in: a session's chosen one, or a key's own. */
  environment: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
});
export type MeBody = z.infer<typeof meBody>;

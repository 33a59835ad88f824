import { z } from "zod";
import { flag, fromJsonText } from "./common";

/** Applications (spec: Application; docs/decisions.md D10): the receivers of outbound messages, each owning endpoints. */

/**
 * A page size from the query string (text) or from a caller that parsed it
 * already (the CLI's local mode passes numbers): 1..max, default 50.
 */
export function queryLimit(max: number, def = 50) {
  return z
    .union([z.number(), z.string().regex(/^\d+$/, "must be a whole number").transform(Number)])
    .pipe(z.number().int().min(1, "must be at least 1").max(max, `must be at most ${max}`))
    .optional()
    .default(def);
}

/** `disabled`: the application accepts no new messages (409); its endpoints and history stay. */
export const APPLICATION_STATUSES = ["active", "disabled"] as const;
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number];

/**
 * The operator's own key for an application (typically their customer's id):
 * Svix's character set. 32 lower-case hex characters are refused: an
 * application's id looks like that, and `{appId}` accepts both.
 */
export const applicationUid = z
  .string()
  .trim()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_.-]+$/, "letters, digits, '.', '-' and '_'")
  .refine((s) => !/^[0-9a-f]{32}$/.test(s), "must not look like an application id (32 lower-case hex characters)");

/** A JSON object, or the JSON-encoded string the API returns for it. */
const metadataInput = z.preprocess(
  fromJsonText,
  z.record(z.string(), z.unknown()).refine((o) => JSON.stringify(o).length <= 64 * 1024, "must be at most 64 KiB of JSON"),
);

const fields = {
  name: z.string().trim().min(1).max(200),
  uid: applicationUid,
  description: z.string().max(5000).nullable(),
  metadata: metadataInput.nullable(),
  /** Deliveries per second across all of the application's endpoints. */
  rate_limit: z.int().min(1).max(100_000).nullable(),
  status: z.enum(APPLICATION_STATUSES),
  /**
   * Opts the application in: endpoints set through its portal links may reach
   * what the server's own destinations may (private addresses unless
   * HOOKRELAY_BLOCK_PRIVATE_DESTINATIONS). Off by default: they are held to
   * the private-address block. Never settable with a portal link.
   */
  allow_private_endpoints: flag,
};

export const createApplicationInput = z.object({
  ...z.object(fields).partial().shape,
  name: fields.name,
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
});
export type CreateApplicationInput = z.input<typeof createApplicationInput>;

export const updateApplicationInput = z.object(fields).partial();
export type UpdateApplicationInput = z.input<typeof updateApplicationInput>;

export const listApplicationsQuery = z.object({
  org_id: z.string().max(64).optional(),
  env_id: z.string().max(64).optional(),
  /** Opaque: the `cursor` of the previous page. */
  cursor: z.string().max(2000).optional(),
  limit: queryLimit(100),
  /** Part of the name or of the uid (case-insensitive for ASCII). */
  search: z.string().max(200).optional(),
});
export type ListApplicationsQuery = z.input<typeof listApplicationsQuery>;

export const application = z.object({
  id: z.string(),
  org_id: z.string(),
  env_id: z.string(),
  name: z.string(),
  uid: z.string(),
  description: z.string().nullable(),
  metadata: z.string().nullable().describe("JSON object, encoded as a string"),
  status: z.string(),
  rate_limit: z.number().int().nullable(),
  allow_private_endpoints: z.number().int().describe("1: endpoints set through a portal link may reach private addresses (as far as the server allows); 0: held to the private-address block"),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ApplicationDto = z.infer<typeof application>;

export const applicationListItem = application.extend({ endpoint_count: z.number().int(), message_count: z.number().int() });
export type ApplicationListItem = z.infer<typeof applicationListItem>;

export const applicationBody = z.object({ application });
export const applicationList = z.object({
  applications: z.array(applicationListItem),
  cursor: z.string().nullable().describe("Pass back as `cursor` for the next (older) page; null on the last page"),
});

/** `{appId}` in every outbound path: the application's id or its uid. */
export const appParam = z.object({ appId: z.string().describe("Application id (32 hex) or uid") });

import { z } from "zod";

/** Flags are accepted as booleans on input (docs/decisions.md D3) and stored as 0/1. */
export const flag = z.boolean();
export const toFlag = (b: boolean | undefined | null) => (b ? 1 : 0);

/** JSON columns are returned as JSON-encoded strings. */
export const jsonText = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

export const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date-time");

export const successBody = z.object({ success: z.literal(true) });

/**
 * JSON fields are returned as JSON-encoded strings (docs/decisions.md D3); accepting
 * that string form back on input lets a client PATCH what it just read.
 */
export const fromJsonText = (v: unknown) => {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
};

/** A named place (an organization, an environment): its name, and the slug that names it in headers and flags. */
export const placeFields = {
  name: z.string().trim().min(1).max(200),
  slug: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, "lower-case letters, digits, '.', '-' and '_', at most 100"),
};

/** `?force=true` deletes a place with everything it holds; otherwise one holding resources is refused (409). */
export const forceDeleteQuery = (what: string) =>
  z.object({
    force: z
      .enum(["true", "false"])
      .optional()
      .describe(`true: delete the ${what} with everything it holds; otherwise one holding resources is refused (409)`),
  });

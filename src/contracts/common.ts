import { z } from "zod";

/** Flags are accepted as booleans on input (docs/decisions.md D3) and stored as 0/1. */
export const flag = z.boolean();
export const toFlag = (b: boolean | undefined | null) => (b ? 1 : 0);

/** JSON columns are returned as JSON-encoded strings. */
export const jsonText = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

export const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date-time");

export const successBody = z.object({ success: z.literal(true) });

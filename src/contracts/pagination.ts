import { z } from "zod";
import { AppError } from "./errors";

/** Query numbers arrive as text; limit 1..100 (default 50), offset >= 0. */
export const limitParam = z
  .string()
  .regex(/^\d+$/, "must be a whole number")
  .transform(Number)
  .pipe(z.number().int().min(1, "must be at least 1").max(100, "must be at most 100"))
  .optional()
  .default(50);

export const offsetParam = z
  .string()
  .regex(/^\d+$/, "must be a whole number >= 0")
  .transform(Number)
  .optional()
  .default(0);

export const pageQuery = z.object({
  limit: limitParam,
  offset: offsetParam,
  cursor: z.string().max(2000).optional(),
  direction: z.enum(["next", "prev"]).optional(),
});

export type PageQuery = z.infer<typeof pageQuery>;

export interface Pagination {
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
}

/** A position in a newest-first list: the sort time and the id that breaks ties. */
export interface CursorKey {
  t: string;
  id: string;
}

export interface DecodedCursor extends CursorKey {
  /** `next` walks to older items, `prev` to newer ones. */
  d: "next" | "prev";
}

export function encodeCursor(key: CursorKey, d: "next" | "prev"): string {
  return Buffer.from(JSON.stringify({ t: key.t, id: key.id, d })).toString("base64url");
}

export function decodeCursor(raw: string, direction?: "next" | "prev"): DecodedCursor {
  try {
    const text = Buffer.from(raw, "base64url").toString("utf8");
    const v = JSON.parse(text) as Partial<DecodedCursor>;
    if (typeof v.t !== "string" || typeof v.id !== "string") throw new Error();
    return { t: v.t, id: v.id, d: direction ?? (v.d === "prev" ? "prev" : "next") };
  } catch {
    throw new AppError("validation_error", "Invalid cursor", [{ field: "query.cursor", message: "not a cursor returned by this API" }]);
  }
}

/** The spec's `pagination` object, for response docs. */
export const paginationBody = z.object({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
  prev_cursor: z.string().nullable(),
});

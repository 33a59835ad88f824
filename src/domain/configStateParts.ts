import { AppError } from "../contracts/errors";
import type { Deps } from "./deps";

/** What the readers of an environment's configuration share (src/domain/configState.ts). */

export interface StateEntry {
  id: string;
  key: string;
  entry: Record<string, unknown>;
}

/** What references are written with: a referred-to resource's slug or name by its id. */
export interface Names {
  sourceSlug: Map<string, string>;
  destinationName: Map<string, string>;
}

export const parsedJson = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

export function opened(deps: Deps, sealed: string | null, what: string): string | null {
  if (sealed === null) return null;
  try {
    return deps.secrets.open(sealed);
  } catch {
    throw new AppError("conflict", `The ${what} cannot be decrypted with the current HOOKRELAY_SECRET_KEY; set it again before exporting or applying`);
  }
}

/** Same value, whatever the order of an object's keys. */
export function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

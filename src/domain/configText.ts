import { parseDocument, stringify } from "yaml";
import { AppError } from "../contracts/errors";
import type { RelayFile } from "../contracts/relayFile";
import { sortKeys } from "./configState";

/**
 * A relay file as text and back (docs/config-as-code.md). The same writer
 * serves the API and the CLI, so a file exported either way is the same
 * bytes: keys sorted, no line folding, one trailing newline.
 */

export type RelayFormat = "yaml" | "json";

/** A file is read whole; this bounds what one costs to parse. */
export const MAX_RELAY_TEXT_BYTES = 4 * 1024 * 1024;

export function renderRelayFile(doc: RelayFile, format: RelayFormat): string {
  const sorted = sortKeys(doc);
  if (format === "json") return JSON.stringify(sorted, null, 2) + "\n";
  return stringify(sorted, { sortMapEntries: true, lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false });
}

/**
 * YAML (JSON is YAML too) → a value for the relay file's schema. Syntax
 * errors name their line and column; aliases are bounded (the yaml
 * package's maxAliasCount) so a file cannot expand into unbounded memory.
 */
export function parseRelayText(text: string): unknown {
  if (Buffer.byteLength(text) > MAX_RELAY_TEXT_BYTES) {
    throw new AppError("validation_error", `The relay file is over ${MAX_RELAY_TEXT_BYTES / 1024 / 1024} MiB`, [{ field: "(file)", message: "too large" }]);
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new AppError(
      "validation_error",
      "The relay file is not valid YAML or JSON",
      doc.errors.slice(0, 10).map((e) => ({ field: e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : "(file)", message: e.message.split("\n")[0] })),
    );
  }
  return doc.toJS({ maxAliasCount: 100 });
}

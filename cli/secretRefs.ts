import { readFileSync } from "node:fs";
import type { SecretRef } from "../src/contracts/relayFile";

/**
 * What a relay file's secret reference stands for where `apply` runs: an
 * environment variable, or a file's content (one trailing newline dropped,
 * as `echo secret > file` writes it). undefined when there is none; the
 * server never resolves references (docs/config-as-code.md).
 */
export function readSecretRef(ref: SecretRef, env: Record<string, string | undefined> = process.env): string | undefined {
  if (ref.kind === "env") return env[ref.name];
  try {
    return readFileSync(ref.path, "utf8").replace(/\r?\n$/, "");
  } catch {
    return undefined;
  }
}

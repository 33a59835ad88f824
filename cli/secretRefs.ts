import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { SecretRef } from "../src/contracts/relayFile";

/** A secret is short; a reference to anything larger (or to /dev/zero) is refused rather than read. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * What a relay file's secret reference stands for where `apply` runs: an
 * environment variable, or a regular file's content (one trailing newline
 * dropped, as `echo secret > file` writes it). undefined when there is none;
 * the server never resolves references (docs/config-as-code.md).
 */
export function readSecretRef(ref: SecretRef, env: Record<string, string | undefined> = process.env): string | undefined {
  if (ref.kind === "env") return env[ref.name];
  let fd: number | undefined;
  try {
    fd = openSync(ref.path, "r");
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_SECRET_FILE_BYTES) return undefined;
    const buf = Buffer.alloc(stat.size);
    const read = readSync(fd, buf, 0, stat.size, 0);
    return buf.subarray(0, read).toString("utf8").replace(/\r?\n$/, "");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

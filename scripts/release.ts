/**
 * `npm run release`: the binaries homelabs run, cross-compiled here, with a
 * checksum file: dist/hookrelay-<version>-linux-x64 (any x86-64 CPU: Bun's
 * baseline build, since many small servers lack AVX2),
 * dist/hookrelay-<version>-linux-arm64 (Raspberry Pi 4/5, ARM servers) and
 * dist/SHA256SUMS (`sha256sum -c SHA256SUMS` checks them).
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { compileBinary } from "./build";
import { generateMigrations, generateUi } from "./generate";

const root = join(import.meta.dir, "..");

export const RELEASE_TARGETS = [
  { name: "linux-x64", bunTarget: "bun-linux-x64-baseline" },
  { name: "linux-arm64", bunTarget: "bun-linux-arm64" },
] as const;

export const releaseFile = (name: string) => `hookrelay-${pkg.version}-${name}`;

export async function release(outDir = join(root, "dist")) {
  generateMigrations();
  await generateUi();
  const sums: string[] = [];
  for (const t of RELEASE_TARGETS) {
    const started = performance.now();
    const file = join(outDir, releaseFile(t.name));
    await compileBinary(file, t.bunTarget);
    sums.push(`${createHash("sha256").update(readFileSync(file)).digest("hex")}  ${releaseFile(t.name)}`);
    console.log(`built ${file} in ${Math.round(performance.now() - started)} ms`);
  }
  writeFileSync(join(outDir, "SHA256SUMS"), sums.join("\n") + "\n");
  console.log(`wrote ${join(outDir, "SHA256SUMS")}`);
}

if (import.meta.main) await release();

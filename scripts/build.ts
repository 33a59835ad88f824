/** Builds dist/hookrelay: generated modules (migrations, UI) then one compiled executable. */
import { $ } from "bun";
import { join } from "node:path";
import { generateMigrations, generateUi } from "./generate";

const root = join(import.meta.dir, "..");

/**
 * One compiled executable from cli/main.ts, for this machine or for a Bun
 * target (`bun-linux-arm64`: Bun fetches that runtime from the npm registry).
 * The generated modules must exist (generateMigrations, generateUi).
 */
export async function compileBinary(outfile: string, target?: string) {
  const targetArgs = target ? [`--target=${target}`] : [];
  // The sandbox's worker (src/rules/sandbox.ts) is an entrypoint too: Bun bundles a worker only when told to.
  await $`bun build --compile ${targetArgs} --minify --bytecode --format=esm --no-compile-autoload-dotenv --no-compile-autoload-bunfig ${join(root, "cli/main.ts")} ${join(root, "src/rules/sandboxWorker.ts")} --outfile ${outfile}`
    .cwd(root)
    .quiet();
}

if (import.meta.main) {
  const started = performance.now();
  generateMigrations();
  await generateUi();
  await compileBinary(join(root, "dist/hookrelay"));
  console.log(`built dist/hookrelay in ${Math.round(performance.now() - started)} ms`);
}

/** Builds dist/hookrelay: generated modules (migrations, UI) then one compiled executable. */
import { $ } from "bun";
import { join } from "node:path";
import { generateMigrations, generateUi } from "./generate";

const root = join(import.meta.dir, "..");
const started = performance.now();
generateMigrations();
await generateUi();
await $`bun build --compile --minify --bytecode --format=esm --no-compile-autoload-dotenv --no-compile-autoload-bunfig ${join(root, "cli/main.ts")} --outfile ${join(root, "dist/hookrelay")}`
  .cwd(root)
  .quiet();
console.log(`built dist/hookrelay in ${Math.round(performance.now() - started)} ms`);

import { Command } from "commander";
import pkg from "../package.json" with { type: "json" };
import { binarySchemaVersion, describeSchema } from "../src/db/sqlite/schemaVersion";
import { registerServe } from "./commands/serve";

/**
 * The program itself: its name, description, version and global flags,
 * without any command. cli/program.ts adds every command to it; `serve`
 * alone gets it with only the serve command (serveProgram), so a server's
 * start does not evaluate the modules of forty client commands it never
 * runs (docs/performance.md, "Start-up").
 */
export function rootCommand() {
  return (
    new Command("hookrelay")
      .description("Self-hosted webhook relay: ingest, verify, deliver, retry and replay webhooks, in one binary.")
      // The schema tells which database files this binary migrates forward (docs/operations.md, upgrades).
      .version(`hookrelay ${pkg.version}, schema ${describeSchema(binarySchemaVersion())}`, "--version")
      .option("--url <url>", "URL of a running hookrelay (remote mode) [HOOKRELAY_URL]")
      .option("--api-key <key>", "API key for remote mode [HOOKRELAY_API_KEY]")
      .option("--profile <name>", "saved login profile to use [HOOKRELAY_PROFILE]")
      .option("--data-dir <dir>", "work directly on a local data dir (local mode) [HOOKRELAY_DATA_DIR]")
      .option("--database-url <url>", "work directly on a PostgreSQL database (local mode) [HOOKRELAY_DATABASE_URL]")
      .option("--org <slug>", "organization to act in, by slug or id: a session's or local mode's (an API key has its own) [HOOKRELAY_ORG]")
      .option("--env <slug>", "environment to act in, by slug or id: a session's or local mode's (an API key has its own) [HOOKRELAY_ENV]")
      .option("--json", "print the API's JSON response and nothing else")
      .exitOverride()
      .showHelpAfterError("(add --help for usage)")
      .enablePositionalOptions()
  );
}

/** The program as `hookrelay serve` parses it: the same root and the same serve command, no other. */
export function serveProgram() {
  const program = rootCommand();
  program.commandsGroup("Server:");
  registerServe(program);
  return program;
}

/** The root's flags that take a value: the word after them is that value, not a command. */
const VALUE_FLAGS = new Set(["--url", "--api-key", "--profile", "--data-dir", "--database-url", "--org", "--env"]);

/**
 * Whether these arguments run `serve` itself (`hookrelay [globals] serve …`).
 * Anything else, and any root `--help`, `--version` or unknown flag before
 * the command, gets the whole program, so help, version and usage errors read
 * as they always did.
 */
export function runsServe(argv: string[]): boolean {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "serve") return true;
    if (!arg.startsWith("--") || arg === "--") return false;
    const name = arg.split("=", 1)[0]!;
    if (VALUE_FLAGS.has(name)) {
      if (!arg.includes("=")) i++;
    } else if (name !== "--json") {
      return false;
    }
  }
  return false;
}

import { Command } from "commander";
import pkg from "../package.json" with { type: "json" };
import { registerServe } from "./commands/serve";

/** Global flags and every command. Client commands read the globals through cli/context.ts. */
export function buildProgram() {
  const program = new Command("hookrelay")
    .description("Self-hosted webhook relay: ingest, verify, deliver, retry and replay webhooks, in one binary.")
    .version(pkg.version, "--version")
    .option("--url <url>", "URL of a running hookrelay (remote mode) [HOOKRELAY_URL]")
    .option("--api-key <key>", "API key for remote mode [HOOKRELAY_API_KEY]")
    .option("--profile <name>", "saved login profile to use [HOOKRELAY_PROFILE]")
    .option("--data-dir <dir>", "work directly on a local data dir (local mode) [HOOKRELAY_DATA_DIR]")
    .option("--json", "print the API's JSON response and nothing else")
    .exitOverride()
    .showHelpAfterError()
    .enablePositionalOptions();
  program.commandsGroup("Server:");
  registerServe(program);
  program.commandsGroup("Client:");
  return program;
}

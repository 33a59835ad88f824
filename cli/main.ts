#!/usr/bin/env bun
import { type Command, CommanderError } from "commander";
import { ConfigError } from "../src/config/options";
import { runsServe, serveProgram } from "./rootCommand";
import { CliError, EXIT } from "./errors";
import { errorMessage } from "../src/contracts/errors";

// `serve` evaluates only what it runs; every other use builds the whole program, the commands' modules with it.
const program = runsServe(process.argv) ? serveProgram() : (await import("./program")).buildProgram();
// A reader that stops early (`| head -1`) closes the pipe: that ends a client command, quietly.
// Installed before parsing, because help and usage text are written while commander parses,
// before any action hook runs. `serve` swaps these for its own: a server outlives its log streams.
let serving = false;
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (serving) return;
    if (err.code === "EPIPE") process.exit(EXIT.ok);
    throw err;
  });
}
program.hook("preAction", (_program, command) => {
  if (command.name() === "serve") serving = true;
});
if (wantsJson(process.argv)) jsonUsageErrors(program);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err, program.opts().json === true || wantsJson(process.argv));
}

/** With --json, commander's own usage errors are JSON on stderr too, without the help hint. */
function jsonUsageErrors(cmd: Command) {
  cmd.showHelpAfterError(false).configureOutput({
    outputError: (text, write) => write(JSON.stringify({ error: { code: "usage", message: text.replace(/^error: /, "").trim() } }) + "\n"),
  });
  for (const sub of cmd.commands) jsonUsageErrors(sub);
}

/** --json may follow the verb (`keys list --json`), where the program's own options never see it. */
function wantsJson(argv: string[]) {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/** One line on stderr (the error body in --json mode) and a stable exit code: see `hookrelay help exit-codes`. */
function reportError(err: unknown, json: boolean): number {
  if ((err as NodeJS.ErrnoException)?.code === "EPIPE") return EXIT.ok;
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (err instanceof ConfigError) {
    process.stderr.write(json ? JSON.stringify({ error: { code: "config_error", message: err.message } }) + "\n" : `error: ${err.message}\n`);
    return EXIT.error;
  }
  if (err instanceof CliError) {
    if (json) {
      process.stderr.write(JSON.stringify(err.body ?? { error: { code: err.code ?? "error", message: err.message } }) + "\n");
    } else {
      process.stderr.write(`${err.code ? `error (${err.code})` : "error"}: ${err.message}\n`);
    }
    return err.exitCode;
  }
  const message = errorMessage(err);
  process.stderr.write(json ? JSON.stringify({ error: { code: "internal", message } }) + "\n" : `error: ${message}\n`);
  return EXIT.error;
}

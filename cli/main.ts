#!/usr/bin/env bun
import { CommanderError } from "commander";
import { ConfigError } from "../src/config/options";
import { buildProgram } from "./program";
import { CliError, EXIT } from "./errors";

const program = buildProgram();
try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err, program.opts().json === true);
}

function reportError(err: unknown, json: boolean): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (err instanceof ConfigError) {
    process.stderr.write(`error: ${err.message}\n`);
    return EXIT.error;
  }
  if (err instanceof CliError) {
    const prefix = err.code ? `error (${err.code})` : "error";
    process.stderr.write(json && err.body ? JSON.stringify(err.body) + "\n" : `${prefix}: ${err.message}\n`);
    return err.exitCode;
  }
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.error;
}

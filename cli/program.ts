import { Command } from "commander";
import pkg from "../package.json" with { type: "json" };
import { registerBackup } from "./commands/backup";
import { registerMigrate } from "./commands/migrate";
import { registerConfig } from "./commands/config";
import { registerApply } from "./commands/apply";
import { registerExport } from "./commands/export";
import { registerHealthcheck } from "./commands/healthcheck";
import { registerCluster } from "./commands/cluster";
import { registerCollections } from "./commands/collections";
import { registerCompletion } from "./commands/completion";
import { registerConnections } from "./commands/connections";
import { registerDestinations } from "./commands/destinations";
import { registerAttempts } from "./commands/attempts";
import { registerAlerts } from "./commands/alerts";
import { registerChannels } from "./commands/channels";
import { registerIssues } from "./commands/issues";
import { registerEvents } from "./commands/events";
import { registerEventTypes } from "./commands/eventTypes";
import { registerJobs } from "./commands/jobs";
import { registerReplay } from "./commands/replay";
import { registerSources } from "./commands/sources";
import { registerTopics } from "./commands/topics";
import { registerApps } from "./commands/apps";
import { registerEndpoints } from "./commands/endpoints";
import { registerMessages } from "./commands/messages";
import { registerHelp } from "./commands/help";
import { registerKeys } from "./commands/keys";
import { registerEnvs } from "./commands/envs";
import { registerMembers } from "./commands/members";
import { registerOrgs } from "./commands/orgs";
import { registerAudit } from "./commands/audit";
import { registerListen } from "./commands/listen";
import { registerLogin } from "./commands/login";
import { registerServe } from "./commands/serve";
import { registerUsers } from "./commands/users";
import { binarySchemaVersion, describeSchema } from "../src/db/sqlite/schemaVersion";
import { finishGlobalOptions } from "./command";

/** Global flags and every command. Client commands read the globals through cli/context.ts. */
export function buildProgram() {
  const program = new Command("hookrelay")
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
    .enablePositionalOptions();
  program.commandsGroup("Server:");
  registerServe(program);
  registerBackup(program);
  registerMigrate(program);
  registerHealthcheck(program);
  registerConfig(program);
  registerUsers(program);
  program.commandsGroup("Client:");
  registerLogin(program);
  registerKeys(program);
  registerOrgs(program);
  registerEnvs(program);
  registerMembers(program);
  registerSources(program);
  registerDestinations(program);
  registerConnections(program);
  registerExport(program);
  registerApply(program);
  registerTopics(program);
  registerEventTypes(program);
  registerCollections(program);
  registerApps(program);
  registerEndpoints(program);
  registerMessages(program);
  registerEvents(program);
  registerAttempts(program);
  registerIssues(program);
  registerAlerts(program);
  registerChannels(program);
  registerReplay(program);
  registerJobs(program);
  registerAudit(program);
  registerCluster(program);
  registerListen(program);
  program.commandsGroup("Help:");
  registerCompletion(program);
  registerHelp(program);
  finishGlobalOptions(program);
  program.addHelpText(
    "after",
    `
Client commands work on a server (remote mode: --url with --api-key, or a profile saved by
\`hookrelay login\`) or straight on the database (local mode: --data-dir, or --database-url for PostgreSQL), with the same output.
Global flags go before or after the command. \`hookrelay help exit-codes\` lists the exit codes.

Examples:
  $ hookrelay serve --data-dir ./data
  $ hookrelay login --url http://localhost:8080 --email admin@localhost
  $ hookrelay keys create --name ci --data-dir ./data --json`,
  );
  return program;
}

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
import { rootCommand } from "./rootCommand";
import { finishGlobalOptions } from "./command";

/** Global flags and every command. Client commands read the globals through cli/context.ts. */
export function buildProgram() {
  const program = rootCommand();
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

import type { Command } from "commander";
import { loadConfig } from "../../src/config/config";
import { serverOptions } from "../../src/config/options";
import { lineWriter } from "../../src/observability/logger";
import { firstStartAdmin } from "../../src/boot/firstStart";

/** `hookrelay serve`: the whole relay in this process. */
export function registerServe(program: Command) {
  const cmd = program
    .command("serve")
    .description("Run the relay: API, ingest, delivery workers, schedulers and the admin UI")
    .addHelpText("after", "\nEvery option can also be set with its HOOKRELAY_* variable; flags win.\n\nExamples:\n  $ hookrelay serve --port 8080 --data-dir /var/lib/hookrelay\n  $ HOOKRELAY_ADMIN_PASSWORD=… hookrelay serve --base-url https://hooks.example.com");
  for (const spec of Object.values(serverOptions)) {
    const def = spec.defaultLabel ?? String(spec.default);
    cmd.option(spec.flag, `${spec.description} [${spec.env}] (default: ${def})`);
  }
  cmd.action(async (flags: Record<string, string | undefined>) => {
    // `hookrelay --data-dir X serve`: the global flag before the command means the same.
    flags.dataDir ??= program.opts().dataDir;
    flags.databaseUrl ??= program.opts().databaseUrl;
    const config = loadConfig(flags);
    // A first start's admin password hash is made on another thread while the server's modules load.
    const firstAdmin = firstStartAdmin(config);
    const { startServer } = await import("../../src/server");
    const server = await startServer(config, { firstAdmin });
    // Status lines go to stderr, or to stdout once stderr's reader has gone (see lineWriter).
    const out = lineWriter([process.stderr, process.stdout]);
    // Handlers go in before the "listening" line: whoever reads it may signal at once.
    let signalled = false;
    const shutdown = async (signal: string) => {
      if (signalled) process.exit(1);
      signalled = true;
      out(`${signal}: stopping intake, finishing in-flight work`);
      await server.stop();
      process.exit(0);
    };
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
    out(`hookrelay listening on ${server.url} (data: ${server.store.sqlite ? config.dataDir : server.store.location})`);
    out(`  admin UI  ${server.url}/`);
    out(`  API       ${server.url}/v1   ingest: ${server.deps.settings.baseUrl}/v1/ingest/src_<id>`);
    if (server.bootstrap.generatedPassword) {
      out(`  first start: admin user ${server.bootstrap.email} with password ${server.bootstrap.generatedPassword}`);
      // This line may be kept by a log store (journald); README says how to choose the password before the first start.
      out(`  (shown only this once, but logs keep it: change it, or next time set HOOKRELAY_ADMIN_PASSWORD_FILE before the first start)`);
    } else if (server.bootstrap.created) {
      out(`  first start: admin user ${server.bootstrap.email} (password from ${config.adminPasswordFile !== undefined ? "HOOKRELAY_ADMIN_PASSWORD_FILE" : "HOOKRELAY_ADMIN_PASSWORD"})`);
    }
  });
}

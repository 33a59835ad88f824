import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import type { RelayFile } from "../../src/contracts/relayFile";
import { act, verb } from "../command";
import { usageError } from "../errors";

/** `hookrelay export`: the environment's configuration as one relay file (docs/config-as-code.md). */
export function registerExport(program: Command) {
  const cmd = verb(program, "export", "Write the environment's configuration (sources, destinations, connections, channels, alert rules, topics, event types, collections, applications and endpoints) as one relay file; secrets as ${NAME} references", [
    "hookrelay export > relay.yaml",
    "hookrelay export --format json -o relay.json",
    "hookrelay --env production export --include-secrets -o /root/relay-with-secrets.yaml",
  ])
    .option("--format <format>", "yaml or json", "yaml")
    .option("--include-secrets", "write secrets in full instead of ${NAME} references (needs the admin role; the file is written mode 0600)")
    .option("-o, --output <file>", "write to this file instead of standard output");
  act(cmd, async (ctx, o) => {
    const format = ctx.json ? "json" : o.format;
    if (format !== "yaml" && format !== "json") throw usageError(`--format must be yaml or json, not ${format}`);
    const includeSecrets = o.includeSecrets === true;
    const doc = await ctx.run<RelayFile>({
      method: "GET",
      path: "/config/export",
      query: { format: "json", include_secrets: includeSecrets ? "true" : undefined },
      expect: "version",
      local: async (deps, scope) => {
        const [{ exportConfig }, { applicationsSection }] = await Promise.all([import("../../src/domain/configExport"), import("../../src/outbound/configApplications")]);
        return exportConfig(deps, scope, { includeSecrets }, [applicationsSection]);
      },
    });
    const { renderRelayFile } = await import("../../src/domain/configText");
    const text = renderRelayFile(doc, format);
    if (!o.output) return void process.stdout.write(text);
    try {
      writeFileSync(o.output, text, { mode: includeSecrets ? 0o600 : 0o644 });
    } catch (err) {
      throw usageError(`-o ${o.output}: cannot write the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    ctx.out.note(`Wrote ${o.output}`);
  });
}

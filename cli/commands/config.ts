import type { Command } from "commander";
import { explainConfig } from "../../src/config/explain";
import { serverOptions } from "../../src/config/options";
import { noun } from "../command";
import { Output } from "../output";

/** `hookrelay config print`: the configuration `serve` would run with here, and where each value comes from. */
export function registerConfig(program: Command) {
  const config = noun(program, "config", "Show the server's effective configuration", ["hookrelay config print", "hookrelay config print --json | jq .config.port"]);
  const print = noun(config, "print", "Print every setting `serve` would use with these flags and this environment: value, source (flag, env, default), variable; secrets redacted", [
    "hookrelay config print",
    "hookrelay config print --port 9000 --json",
    "sudo sh -c 'set -a; . /etc/hookrelay/hookrelay.env; exec hookrelay config print --data-dir /var/lib/hookrelay'",
  ]).option("--json", "print {config: {<key>: {value, source, flag, env}}}");
  for (const spec of Object.values(serverOptions)) print.option(spec.flag, `${spec.description} [${spec.env}]`);
  print.action((flags: Record<string, string | undefined> & { json?: boolean }) => {
    const json = flags.json === true || program.opts().json === true;
    const { json: _json, ...serveFlags } = flags;
    // `hookrelay --data-dir X config print`, as with serve.
    serveFlags.dataDir ??= program.opts().dataDir;
    serveFlags.databaseUrl ??= program.opts().databaseUrl;
    const explained = explainConfig(serveFlags, process.env);
    const out = new Output(json);
    if (json) return out.printJson({ config: explained });
    const rows = Object.entries(explained).map(([key, o]) => ({
      setting: key,
      // Durations read as written (24h, 5d), not as the milliseconds serve works with.
      value: o.as_written ?? (o.value === null ? `(${o.default_label ?? "none"})` : String(o.value)),
      source: o.source,
      variable: o.env,
    }));
    out.result({ rows }, { list: "rows", columns: ["setting", "value", "source", "variable"] });
  });
}

import { describeNetworkError } from "../../src/outgoing/networkErrors";
import { InvalidArgumentError, type Command } from "commander";
import { loadConfig } from "../../src/config/config";
import { noun } from "../command";
import { normalizeUrl } from "../context/target";
import { CliError, EXIT } from "../errors";
import { Output } from "../output";

/**
 * `hookrelay healthcheck`: exit 0 when the server answers /readyz with 200
 * (database reachable, workers running), 1 otherwise. For a container's
 * HEALTHCHECK or a monitor; next to `serve`, it finds the server from the
 * same HOOKRELAY_PORT / HOOKRELAY_HOST.
 */
export function registerHealthcheck(program: Command) {
  noun(program, "healthcheck", "Exit 0 when a server is ready (GET /readyz answers 200), 1 when not: for containers and monitors", [
    "hookrelay healthcheck                                  # the server on HOOKRELAY_PORT of this machine",
    "hookrelay healthcheck --url https://hooks.example.com --timeout 2000",
    "# Dockerfile: HEALTHCHECK CMD [\"hookrelay\", \"healthcheck\"]",
  ])
    .option("--url <url>", "the server to check (default: HOOKRELAY_URL, else http://127.0.0.1:<HOOKRELAY_PORT>)")
    .option("--timeout <ms>", "give up after this long", parseTimeout, 5000)
    .option("--json", "print the /readyz answer")
    .action(async (o: { url?: string; timeout: number; json?: boolean }) => {
      const out = new Output(o.json === true || program.opts().json === true);
      const base = normalizeUrl(o.url ?? program.opts().url ?? (process.env.HOOKRELAY_URL || localServer()));
      const target = `${base}/readyz`;
      let res: Response;
      try {
        res = await fetch(target, { signal: AbortSignal.timeout(o.timeout), redirect: "manual" });
      } catch (err) {
        const why = (err as Error)?.name === "TimeoutError" ? `no answer within ${o.timeout} ms` : describeNetworkError(err);
        throw new CliError(`${target}: ${why}`, EXIT.error, "unhealthy");
      }
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      if (res.status !== 200) throw new CliError(`${target} answered ${res.status} ${typeof body === "string" ? body.slice(0, 200) : JSON.stringify(body)}`, EXIT.error, "unhealthy", body);
      out.result(body, { text: () => `ok: ${target}` });
    });
}

/** The address `serve` listens on with the same environment (a wildcard bind is reached on loopback). */
function localServer() {
  const config = loadConfig({}, process.env);
  const host = ["0.0.0.0", "::", ""].includes(config.host) ? "127.0.0.1" : config.host.includes(":") ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

function parseTimeout(raw: string) {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < 1) throw new InvalidArgumentError("--timeout must be a whole number of milliseconds.");
  return n;
}

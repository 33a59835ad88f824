import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { serverOptions } from "../../src/config/options";
import { BINARY } from "./helpers";

/**
 * No container engine runs where the tests run: the Dockerfile and compose
 * files are checked by reading them against the repository and the compiled
 * binary (docs/operations.md, "Containers").
 */
const root = join(import.meta.dirname, "../..");
/** What docs/operations.md tells the reader to build before `docker build`. */
const BUILD_OUTPUT = "dist/hookrelay";
const optionsByEnv = new Map(Object.values(serverOptions).map((o) => [o.env, o]));

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions, comments dropped and continued lines joined. */
function instructions(text: string): Instruction[] {
  const joined = text
    .split("\n")
    .filter((l) => !/^\s*#/.test(l))
    .join("\n")
    .replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(" ") };
    });
}

/** `KEY=value KEY2=value2` of ENV and ARG (no quoting used in our Dockerfile). */
function assignments(args: string): [string, string][] {
  return args.split(/\s+/).map((pair) => {
    const eq = pair.indexOf("=");
    return eq < 0 ? [pair, ""] : [pair.slice(0, eq), pair.slice(eq + 1)];
  });
}

/** The exec form (`["a", "b"]`), which is all this Dockerfile may use: no shell in between. */
function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === "string")) throw new Error(`not exec form: ${args}`);
  return parsed;
}

function run(args: string[]): string {
  const proc = Bun.spawnSync([BINARY, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`hookrelay ${args.join(" ")} exited ${proc.exitCode}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

/** Subcommands a `--help` lists: the first word of each indented entry that is not an option. */
function listedCommands(help: string): Set<string> {
  return new Set([...help.matchAll(/^ {2}([a-z][\w-]*)\b/gm)].map((m) => m[1]!));
}

/** Checks one command line the image runs: `hookrelay <sub> [--flag value]...` with flags its help knows. */
function expectKnownCommand(argv: string[]) {
  expect(argv[0]).toBe("hookrelay");
  const sub = argv[1]!;
  expect(listedCommands(run(["--help"])), `hookrelay --help lists ${sub}`).toContain(sub);
  const subHelp = run([sub, "--help"]);
  for (const flag of argv.slice(2).filter((a) => a.startsWith("--"))) expect(subHelp, `hookrelay ${sub} --help knows ${flag}`).toContain(`${flag} `);
}

function expectKnownSetting(name: string, value: string) {
  const option = optionsByEnv.get(name);
  expect(option, `${name} is an option in src/config/options.ts`).toBeDefined();
  expect(run(["serve", "--help"]), `serve --help names ${name}`).toContain(`[${name}]`);
  expect(() => (option!.parse as (raw: string) => unknown)(value), `${name}=${value} parses`).not.toThrow();
}

/** Duration of compose (`30s`, `1m30s`) in ms. */
function composeDuration(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) ms += Number(n) * units[unit!]!;
  return ms;
}

const dockerfile = instructions(readFileSync(join(root, "Dockerfile"), "utf8"));
const one = (op: string) => {
  const found = dockerfile.filter((i) => i.op === op);
  expect(found, `one ${op}`).toHaveLength(1);
  return found[0]!.args;
};
const args = new Map(dockerfile.filter((i) => i.op === "ARG").flatMap((i) => assignments(i.args)));
const env = new Map(dockerfile.filter((i) => i.op === "ENV").flatMap((i) => assignments(i.args)));

beforeAll(() => {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun scripts/build.ts\` first`);
});

describe("Dockerfile", () => {
  it("starts from a slim Debian and copies only files of the repository or the built binary, admitted by .dockerignore", () => {
    expect(one("FROM")).toMatch(/^debian:[a-z]+-slim$/);
    const ignore = readFileSync(join(root, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    const copies = dockerfile.filter((i) => i.op === "COPY" || i.op === "ADD");
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      expect(copy.op, "COPY, never ADD (no URLs, no archives unpacked)").toBe("COPY");
      const words = copy.args.split(/\s+/).filter((w) => !w.startsWith("--"));
      for (const raw of words.slice(0, -1)) {
        const source = raw.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? "");
        expect(source === BUILD_OUTPUT || existsSync(join(root, source)), `${raw} (${source}) exists or is the build output`).toBe(true);
        // .dockerignore: a pattern matches a path or a folder above it; the last
        // pattern that matches decides, and `!` lets a path back in.
        const parts = source.split("/");
        const paths = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
        let included = true;
        for (const pattern of ignore) {
          const negated = pattern.startsWith("!");
          const glob = new Bun.Glob(negated ? pattern.slice(1) : pattern);
          if (paths.some((p) => glob.match(p))) included = negated;
        }
        expect(included, `.dockerignore lets ${source} into the build context`).toBe(true);
      }
    }
  });

  it("runs `hookrelay serve` as a non-root user, with the data dir a volume and the default port exposed", () => {
    const user = one("USER").split(":")[0]!;
    expect(["root", "0"]).not.toContain(user);
    const entrypoint = execForm(one("ENTRYPOINT"));
    const cmd = execForm(one("CMD"));
    expect([...entrypoint, ...cmd]).toEqual(["hookrelay", "serve"]);
    expectKnownCommand([...entrypoint, ...cmd]);
    expect(env.get("HOOKRELAY_DATA_DIR")).toBe("/data");
    expect(execForm(one("VOLUME"))).toEqual(["/data"]);
    const port = env.get("HOOKRELAY_PORT") ?? String(serverOptions.port.default);
    expect(one("EXPOSE")).toBe(port);
    expect(port).toBe(String(serverOptions.port.default));
  });

  it("sets only settings serve knows, to values it accepts", () => {
    expect(env.size).toBeGreaterThan(0);
    for (const [name, value] of env) expectKnownSetting(name, value);
  });

  it("checks health with `hookrelay healthcheck`, giving it longer than the command's own timeout", () => {
    const healthcheck = one("HEALTHCHECK");
    const cmdAt = healthcheck.indexOf("CMD ");
    expect(cmdAt).toBeGreaterThan(-1);
    const argv = execForm(healthcheck.slice(cmdAt + 4));
    expect(argv.slice(0, 2)).toEqual(["hookrelay", "healthcheck"]);
    expectKnownCommand(argv);
    const timeoutFlag = argv.indexOf("--timeout");
    const commandTimeout = timeoutFlag < 0 ? 5000 : Number(argv[timeoutFlag + 1]);
    expect(run(["healthcheck", "--help"])).toContain("(default: 5000)");
    const dockerTimeout = /--timeout=(\S+)/.exec(healthcheck.slice(0, cmdAt))?.[1];
    expect(dockerTimeout, "HEALTHCHECK --timeout").toBeDefined();
    expect(composeDuration(dockerTimeout!)).toBeGreaterThan(commandTimeout);
  });
});

interface ComposeService {
  build?: string | { context?: string };
  image?: string;
  environment?: Record<string, string>;
  env_file?: string | string[];
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] };
  stop_grace_period?: string;
}

const composeFiles = ["compose.yaml", "compose.postgres.yaml"];
const compose = (file: string) => parseYaml(readFileSync(join(root, file), "utf8")) as { services: Record<string, ComposeService>; volumes?: Record<string, unknown> };

describe.each(composeFiles)("%s", (file) => {
  const { services, volumes } = compose(file);
  const relay = services.hookrelay!;

  it("builds the same image from the repository's Dockerfile, keeps /data in a named volume, publishes the exposed port", () => {
    expect(relay).toBeDefined();
    const context = typeof relay.build === "string" ? relay.build : relay.build?.context;
    expect(context).toBe(".");
    expect(relay.image).toBe(compose(composeFiles[0]!).services.hookrelay!.image);
    const data = relay.volumes?.find((v) => v.endsWith(":/data"));
    expect(data, "a volume on /data").toBeDefined();
    expect(volumes).toHaveProperty(data!.split(":")[0]!);
    expect(relay.ports?.map((p) => p.split(":").at(-1))).toEqual([one("EXPOSE")]);
    // More than serve's drain deadline, so that `docker compose stop` lets it drain.
    expect(composeDuration(relay.stop_grace_period ?? "10s")).toBeGreaterThan(serverOptions.shutdownTimeoutMs.default);
  });

  it("uses only HOOKRELAY_* settings serve knows, and keeps the secrets in env files git ignores", () => {
    for (const [name, value] of Object.entries(relay.environment ?? {})) {
      expect(name).toMatch(/^HOOKRELAY_/);
      expectKnownSetting(name, String(value));
    }
    for (const service of Object.values(services)) {
      const envFiles = [service.env_file ?? []].flat();
      for (const envFile of envFiles) {
        const ignored = Bun.spawnSync(["git", "check-ignore", "-q", envFile], { cwd: root }).exitCode;
        expect(ignored, `${envFile} is in .gitignore`).toBe(0);
      }
    }
    expect([relay.env_file].flat()).toContain("hookrelay.env");
  });
});

describe("compose.postgres.yaml with PostgreSQL", () => {
  it("starts hookrelay once PostgreSQL's own healthcheck passes", () => {
    const { services } = compose("compose.postgres.yaml");
    expect(services.hookrelay!.depends_on?.postgres?.condition).toBe("service_healthy");
    expect(services.postgres!.image).toMatch(/^postgres:\d+/);
    expect(Number(/^postgres:(\d+)/.exec(services.postgres!.image!)![1])).toBeGreaterThanOrEqual(15);
    expect(services.postgres!.healthcheck?.test?.slice(0, 2)).toEqual(["CMD", "pg_isready"]);
    expect(services.postgres!.volumes?.some((v) => v.endsWith(":/var/lib/postgresql/data"))).toBe(true);
  });
});

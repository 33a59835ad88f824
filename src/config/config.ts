import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { oidcSettings } from "./oidc";
import { ConfigError, serverOptions, type ServerOptionKey } from "./options";

type Parsed<K extends ServerOptionKey> = ReturnType<(typeof serverOptions)[K]["parse"]>;
export type Config = { [K in ServerOptionKey]: Parsed<K> } & { baseUrl: string };

export { ConfigError };

/** Flags win over HOOKRELAY_* variables, which win over defaults. */
export function loadConfig(flags: Record<string, string | undefined> = {}, env: Record<string, string | undefined> = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(serverOptions)) {
    const raw = flags[key] ?? env[spec.env];
    out[key] = raw === undefined ? spec.default : (spec.parse as (r: string) => unknown)(String(raw));
  }
  const config = out as Config;
  config.dataDir = resolve(config.dataDir);
  config.baseUrl ??= `http://localhost:${config.port}`;
  // A half configuration fails now, with its reason, rather than at the first sign-in.
  oidcSettings(config);
  if (config.adminPasswordFile !== undefined) config.adminPassword = readPasswordFile(config.adminPasswordFile, config.adminPassword);
  return config;
}

/**
 * Fails with a one-line reason when the data dir cannot be created or
 * written. A dir made here is 0700 whatever the umask (docs/operations.md
 * "File modes"); an existing one is tightened by serve (src/db/privateFiles.ts).
 */
export function ensureDataDir(dataDir: string) {
  try {
    if (!existsSync(dataDir)) {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      chmodSync(dataDir, 0o700);
    }
    accessSync(dataDir, constants.W_OK);
  } catch {
    throw new ConfigError(`data dir ${dataDir} is not writable`);
  }
}

/** HOOKRELAY_ADMIN_PASSWORD_FILE: the password is the file's content, less one trailing newline. */
function readPasswordFile(path: string, given: string | undefined): string {
  if (given !== undefined) throw new ConfigError("give the admin password or a password file, not both");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new ConfigError(`admin password file ${path} cannot be read`);
  }
  const password = text.replace(/\r?\n$/, "");
  if (password === "") throw new ConfigError(`admin password file ${path} is empty`);
  return password;
}

import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError, EXIT } from "./errors";

/** A saved login: where the server is and the session cookie it handed out. */
export interface Profile {
  url: string;
  /** `hookrelay_session=<token>`: sent as the Cookie header. */
  cookie: string;
  email: string;
  user_id: string;
  saved_at: string;
  /** `hookrelay login --env`: the environment this profile's commands act in unless --env names another. */
  env?: string;
  /** `hookrelay login --org`: the organization this profile's commands act in unless --org names another. */
  org?: string;
}

interface ProfileFile {
  current?: string;
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = "default";

/** `$XDG_CONFIG_HOME/hookrelay/` (fallback `~/.config/hookrelay/`). */
export function configDir(env: Record<string, string | undefined> = process.env) {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/") ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), ".config");
  return join(base, "hookrelay");
}

export const profilesPath = (env?: Record<string, string | undefined>) => join(configDir(env), "profiles.json");

export function readProfiles(env?: Record<string, string | undefined>): ProfileFile {
  const file = profilesPath(env);
  if (!existsSync(file)) return { profiles: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as ProfileFile;
    return { current: parsed.current, profiles: parsed.profiles ?? {} };
  } catch {
    throw new CliError(`cannot read ${file}: not valid JSON (delete it and log in again)`, EXIT.error, "config_invalid");
  }
}

/** Written whole to a 0600 temp file then renamed, so a reader never sees half a file. */
export function writeJsonPrivate(file: string, data: unknown) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data, null, 2) + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

export function writeProfiles(data: ProfileFile, env?: Record<string, string | undefined>) {
  writeJsonPrivate(profilesPath(env), data);
}

/** The profile name in use: --profile, HOOKRELAY_PROFILE, the last one logged in, or `default`. */
export function profileName(flag: string | undefined, env: Record<string, string | undefined> = process.env) {
  return flag || env.HOOKRELAY_PROFILE || readProfiles(env).current || DEFAULT_PROFILE;
}

export function saveProfile(name: string, profile: Profile, env?: Record<string, string | undefined>) {
  const data = readProfiles(env);
  data.profiles[name] = profile;
  data.current = name;
  writeProfiles(data, env);
}

export function removeProfile(name: string, env?: Record<string, string | undefined>) {
  const data = readProfiles(env);
  if (!data.profiles[name]) return false;
  delete data.profiles[name];
  if (data.current === name) data.current = Object.keys(data.profiles)[0];
  writeProfiles(data, env);
  return true;
}

import type { Command } from "commander";
import type { MeBody } from "../../src/contracts/apiKeys";
import { readFileSync } from "node:fs";
import { act, globalFlags, verb } from "../command";
import { RemoteClient } from "../context/remote";
import { normalizeUrl } from "../context/target";
import { CliError, EXIT, usageError } from "../errors";
import { Output } from "../output";
import { profileName, profilesPath, readProfiles, removeProfile, saveProfile } from "../profiles";
import { ask, canPrompt } from "../prompt";

/** `hookrelay login`, `logout`, `whoami`: a session saved in a 0600 profile file. */
export function registerLogin(program: Command) {
  verb(program, "login", "Log in to a hookrelay server and save the session in a profile", [
    "hookrelay login --url https://hooks.example.com --email admin@example.com",
    "HOOKRELAY_PASSWORD=… hookrelay login --url http://localhost:8080 --email admin@localhost --profile home",
    "printf '%s' \"$PW\" | hookrelay login --url http://localhost:8080 --email me@x --password-stdin",
    "hookrelay login --url http://localhost:8080 --email me@x --org acme --env staging",
  ])
    .option("--email <email>", "account email [HOOKRELAY_EMAIL]")
    .option("--password <password>", "account password [HOOKRELAY_PASSWORD] (prefer the variable or --password-stdin)")
    .option("--password-stdin", "read the password from standard input")
    .addHelpText("after", "\nThe session is saved in $XDG_CONFIG_HOME/hookrelay/profiles.json (mode 0600); later commands use it.\nPrompts for anything missing only when run in a terminal.")
    .action(async (...a: unknown[]) => {
      const cmd = a[a.length - 1] as Command;
      const o = cmd.opts();
      const g = globalFlags(cmd);
      const out = new Output(g.json === true);
      if (g.dataDir || g.databaseUrl) throw usageError("login is for a remote server; local mode (--data-dir, --database-url) needs no login");
      if (g.apiKey) throw usageError("login uses email and password, not --api-key");
      const name = profileName(g.profile);
      const saved = readProfiles().profiles[name];
      const interactive = canPrompt() && !o.passwordStdin;

      let rawUrl = g.url ?? process.env.HOOKRELAY_URL ?? saved?.url;
      if (!rawUrl && interactive) rawUrl = await ask("Server URL: ");
      if (!rawUrl) throw usageError("missing --url (or HOOKRELAY_URL); not prompting because this is not a terminal");
      const url = normalizeUrl(rawUrl);

      let email: string | undefined = o.email ?? process.env.HOOKRELAY_EMAIL;
      if (!email && interactive) email = await ask("Email: ");
      if (!email) throw usageError("missing --email (or HOOKRELAY_EMAIL); not prompting because this is not a terminal");

      let password: string | undefined = o.password ?? (o.passwordStdin ? readFileSync(0, "utf8").replace(/\r?\n$/, "") : process.env.HOOKRELAY_PASSWORD);
      if (!password && interactive) password = await ask("Password: ", { hidden: true });
      if (!password) throw usageError("missing --password, --password-stdin or HOOKRELAY_PASSWORD; not prompting because this is not a terminal");

      const client = new RemoteClient(url, { kind: "none" });
      const res = await client.fetch("POST", "/auth/login", { body: { email, password } });
      const body = (await res.json().catch(() => null)) as any;
      if (!res.ok) throw client.failure("POST", "/auth/login", res, body);
      const cookie = res.headers
        .getSetCookie()
        .map((c) => c.split(";")[0]!)
        .find((c) => c.startsWith("hookrelay_session="));
      if (!cookie || !body?.user) throw client.notHookrelay("POST", "/auth/login", res, "no session cookie");
      if (g.env !== undefined || g.org !== undefined) {
        // Checked now, so a mistyped slug fails at login rather than at every later command.
        const check = await new RemoteClient(url, { kind: "session", cookie, profile: name }, g.env, g.org).fetch("GET", "/auth/me");
        if (!check.ok) throw client.failure("GET", "/auth/me", check, await check.json().catch(() => null));
      }
      const where = { ...(g.env !== undefined ? { env: g.env } : {}), ...(g.org !== undefined ? { org: g.org } : {}) };
      saveProfile(name, { url, cookie, email: body.user.email, user_id: body.user.id, saved_at: new Date().toISOString(), ...where });
      out.result(body, { text: (r, c) => `${c.green("✓")} Logged in to ${url} as ${c.bold(r.user.email)} (profile ${name}, saved in ${profilesPath()})` });
    });

  verb(program, "logout", "End the saved session on the server and forget it", ["hookrelay logout", "hookrelay logout --profile home"]).action(async (...a: unknown[]) => {
    const cmd = a[a.length - 1] as Command;
    const g = globalFlags(cmd);
    const out = new Output(g.json === true);
    if (g.dataDir || g.databaseUrl) throw usageError("logout is for a remote server; local mode (--data-dir, --database-url) has no session");
    const name = profileName(g.profile);
    const profile = readProfiles().profiles[name];
    if (!profile) throw new CliError(`not logged in (no profile "${name}")`, EXIT.error, "not_logged_in");
    const client = new RemoteClient(profile.url, { kind: "session", cookie: profile.cookie, profile: name });
    try {
      const res = await client.fetch("POST", "/auth/logout");
      // 401: the session had already ended; either way it is gone now.
      if (!res.ok && res.status !== 401) out.warn(`the server answered ${res.status}; forgetting the session anyway`);
    } catch (err) {
      out.warn(`${(err as Error).message}; forgetting the session anyway`);
    }
    removeProfile(name);
    out.result({ success: true }, { text: (_r, c) => `${c.green("✓")} Logged out of ${profile.url} (profile ${name} removed)` });
  });

  act(verb(program, "whoami", "Show who the CLI acts as, and in which organization and environment", ["hookrelay whoami", "hookrelay whoami --data-dir ./data --json"]), async (ctx) => {
    const res = await ctx.run<MeBody>({
      method: "GET",
      path: "/auth/me",
      expect: "org_id",
      local: async (deps, scope) => (await import("../../src/domain/sessions")).whoAmI(deps, scope),
    });
    ctx.out.result(res, {
      text: (r, c) => {
        const who = r.user ? c.bold(r.user.email) : c.bold(ctx.mode === "local" ? "local mode (direct database access)" : "an API key");
        return `${who} on ${ctx.where}\norganization ${c.bold(r.org_name)} ${c.dim(`(${r.org_id})`)}\nenvironment  ${c.bold(r.env_name)} ${c.dim(`(${r.env_id})`)}`;
      },
    });
  });
}

import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { act, noun, verb } from "../command";
import { usageError } from "../errors";
import { ask, canPrompt } from "../prompt";

const sessions = () => import("../../src/domain/sessions");

/**
 * `hookrelay users …`: what only the operator on the server may do to a
 * dashboard account, in local mode (there is no API for either): lift a
 * login lock-out, set a password, print a one-time reset link.
 */
export function registerUsers(program: Command) {
  const users = noun(program, "users", "Admin UI users: lift a login lock-out, set a password (local mode: --data-dir or --database-url)", [
    "hookrelay users unlock admin@localhost --data-dir /var/lib/hookrelay",
    "hookrelay users set-password admin@localhost --data-dir /var/lib/hookrelay",
    "hookrelay users reset-password --email admin@localhost --data-dir /var/lib/hookrelay",
  ]);

  act(
    verb(users, "unlock <email>", "Forget the account's failed logins on every node, so it may log in again at once (its address's own failures still count)", [
      "hookrelay users unlock admin@localhost --data-dir /var/lib/hookrelay",
      "hookrelay users unlock ops@example.com --database-url postgres://hookrelay@db/hookrelay --json",
    ]),
    async (ctx, _o, [email]) => {
      if (ctx.mode === "remote") throw usageError("users unlock works on the server's database in local mode: pass --data-dir (or --database-url), not --url/--api-key/--profile");
      const res = await ctx.run({
        method: "POST",
        path: "/users/unlock",
        expect: "unlocked_at",
        local: async (deps) => (await sessions()).unlockLogin(deps, email!),
      });
      ctx.out.result(res, { text: (r, c) => `${c.green("✓")} ${c.cyan(r.user.email)} may log in again (failed logins forgotten on every node at its next login)` });
    },
  );

  act(
    verb(users, "set-password <email>", "Set a user's password and sign out all of that user's sessions (local mode; the new password from stdin or a prompt)", [
      "hookrelay users set-password admin@localhost --data-dir /var/lib/hookrelay",
      "head -c 24 /dev/urandom | base64 | tee new-password | hookrelay users set-password admin@localhost --data-dir ./data --password-stdin",
    ]).option("--password-stdin", "read the new password from standard input (one trailing newline dropped)"),
    async (ctx, o, [email]) => {
      if (ctx.mode !== "local" || !ctx.local) throw usageError("set-password works on the database itself: give --data-dir (or --database-url), as the server's own user");
      let password: string | undefined = o.passwordStdin ? readFileSync(0, "utf8").replace(/\r?\n$/, "") : undefined;
      if (password === undefined && canPrompt()) {
        password = await ask("New password: ", { hidden: true });
        if (password !== (await ask("Again: ", { hidden: true }))) throw usageError("the two passwords differ");
      }
      if (!password) throw usageError("missing --password-stdin; not prompting because this is not a terminal");
      const { setUserPassword } = await import("../../src/domain/users");
      // Local only (checked above): the operation has no route, run() calls the domain and maps its errors.
      const res = await ctx.run({ method: "POST", path: "/users/password", expect: "email", local: (deps) => setUserPassword(deps, email!, password) });
      ctx.out.result(res, { text: (r, c) => `${c.green("✓")} New password set for ${c.cyan(r.email)}; ${r.sessions_ended} session(s) signed out` });
    },
  );

  act(
    verb(
      users,
      "reset-password",
      "Print a one-time link (24 h) that lets the user set a new password and sign in, even with password login off; lifts a login lock-out and re-enables a disabled owner (local mode)",
      [
        "hookrelay users reset-password --email admin@localhost --data-dir /var/lib/hookrelay",
        "HOOKRELAY_BASE_URL=https://hooks.example.com hookrelay users reset-password --email ops@example.com --database-url postgres://hookrelay@db/hookrelay",
      ],
    ).requiredOption("--email <email>", "the user's email address"),
    async (ctx, o) => {
      // Whoever can open the database may take over any account: over HTTP nobody may.
      if (ctx.mode !== "local" || !ctx.local) throw usageError("reset-password is for the operator on the server: run it there in local mode with --data-dir (or --database-url), not --url/--api-key/--profile");
      const { issuePasswordReset } = await import("../../src/domain/passwordReset");
      const res = await ctx.run({ method: "POST", path: "/users/password-reset", expect: "url", local: (deps) => issuePasswordReset(deps, o.email) });
      ctx.out.result(res, {
        text: (r, c) =>
          [
            `${c.green("✓")} A one-time link for ${c.cyan(r.user.email)}, good until ${r.expires_at}:`,
            "",
            `  ${r.url}`,
            "",
            "Opening it sets a new password and signs in; the user's other sessions end. A newer link replaces this one.",
            ...(r.reenabled ? ["The user's owner membership was disabled: it is active again."] : []),
            "The link is built on HOOKRELAY_BASE_URL: set it to the address users reach the UI at if this one is wrong.",
          ].join("\n"),
      });
    },
  );
}

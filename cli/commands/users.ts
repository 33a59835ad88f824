import type { Command } from "commander";
import { act, noun, verb } from "../command";
import { usageError } from "../errors";

const domain = () => import("../../src/domain/sessions");

/** `hookrelay users unlock EMAIL`: lifts the login throttle's lock on an account; local mode only (the locked-out user cannot log in to ask). */
export function registerUsers(program: Command) {
  const users = noun(program, "users", "Dashboard users: lift a login lock-out (local mode, on the server)", [
    "hookrelay users unlock admin@localhost --data-dir /var/lib/hookrelay",
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
        local: async (deps) => (await domain()).unlockLogin(deps, email!),
      });
      ctx.out.result(res, { text: (r, c) => `${c.green("✓")} ${c.cyan(r.user.email)} may log in again (failed logins forgotten on every node at its next login)` });
    },
  );
}

import type { Command } from "commander";
import { Option } from "commander";
import { addMemberInput, updateMemberInput, type MemberDto } from "../../src/contracts/members";
import { roles } from "../../src/contracts/roles";
import { AppError } from "../../src/contracts/errors";
import type { Context } from "../context";
import { parseInput, path } from "../context";
import { confirm } from "../prompt";
import { appErrorToCli } from "../errors";
import { Resource } from "../resource";

const domain = () => import("../../src/domain/members");

/** `<member>` may be the email: the API's paths take the user id, so the email is looked up among the organization's members. */
async function memberId(ctx: Context, ref: string): Promise<string> {
  if (!ref.includes("@")) return ref;
  const res = await ctx.run<{ members: MemberDto[] }>({ method: "GET", path: "/members", expect: "members", local: async (deps, scope) => (await domain()).listMembers(deps, scope) });
  const found = res.members.find((m) => m.email === ref.trim().toLowerCase());
  if (!found) throw appErrorToCli(new AppError("not_found", `No member ${ref} in the organization`));
  return found.user_id;
}

/** `hookrelay members list|add|update|remove`: the organization's members and their roles (docs/teams.md, "Members and invites"). */
export function registerMembers(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "members",
      singular: "member",
      description: "The organization's members and their roles; add invites a new email with a one-time link",
      path: "/members",
      listKey: "members",
      itemKey: "member",
      columns: ["user_id", "email", "name", "role", "status", "last_login_at"],
      exampleId: "ada@example.com",
      domain,
      resolveId: memberId,
    },
    ["hookrelay members list", "hookrelay members add --email ada@example.com --role developer", "hookrelay members update ada@example.com --role admin", "hookrelay members remove ada@example.com --yes"],
  );
  r.list({ local: (m, deps, scope) => m.listMembers(deps, scope), examples: ["hookrelay members list", "hookrelay members list --json"] });
  r.verb(
    "add",
    "Add a member: an email with an account joins at once; a new one is invited, and the one-time link (7 days) is printed once",
    ["hookrelay members add --email ada@example.com --role developer", "hookrelay members add --email bob@example.com --role viewer --name 'Bob' --json"],
    (cmd) =>
      cmd
        .requiredOption("--email <email>", "the person's email address")
        .addOption(new Option("--role <role>", "what they may do here (docs/teams.md)").choices(roles).makeOptionMandatory())
        .option("--name <name>", "their name, until they set their own"),
    async (ctx, opts) => {
      const body = { email: opts.email, role: opts.role, ...(opts.name ? { name: opts.name } : {}) };
      const res = await ctx.run<{ member: MemberDto; invite_url: string | null }>({
        method: "POST",
        path: "/members",
        body,
        expect: "member",
        local: async (deps, scope) => (await domain()).addMember(deps, scope, parseInput(addMemberInput, body)),
      });
      ctx.out.result(res, {
        text: (r, c) =>
          r.invite_url
            ? `${c.green("✓")} Invited ${c.cyan(r.member.email)} as ${r.member.role}. Send them this link (it works once, for 7 days; it is not shown again):\n${r.invite_url}`
            : `${c.green("✓")} Added ${c.cyan(r.member.email)} as ${r.member.role} (they already have an account: no invite needed)`,
      });
    },
  );
  r.update({
    input: updateMemberInput,
    help: { role: "the member's new role", disabled: "disable the member (their keys are revoked and sessions ended at once); --no-disabled enables again" },
    local: (m, deps, scope, id, body) => m.updateMember(deps, scope, id, parseInput(updateMemberInput, body)),
    examples: ["hookrelay members update ada@example.com --role admin", "hookrelay members update ada@example.com --disabled", "hookrelay members update ada@example.com --no-disabled"],
  });
  r.verb(
    "remove <member>",
    "Remove a member from the organization (their account stays); their keys of the organization are revoked and their sessions end",
    ["hookrelay members remove ada@example.com --yes"],
    (cmd) => cmd.option("-y, --yes", "do not ask for confirmation"),
    async (ctx, opts, [ref], load) => {
      const id = await memberId(ctx, ref!);
      await confirm(opts, `Remove member ${ref === id ? id : `${ref} (${id})`} from the organization?`);
      const res = await ctx.run({ method: "DELETE", path: path`/members/${id}`, expect: "success", local: async (deps, scope) => (await load()).removeMember(deps, scope, id) });
      ctx.out.result(res, { text: (_r, c) => `${c.green("✓")} Removed member ${c.cyan(ref!)}` });
    },
  );
  return r;
}

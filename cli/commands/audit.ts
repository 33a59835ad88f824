import type { Command } from "commander";
import { listAuditQuery } from "../../src/contracts/audit";
import { act, noun, verb } from "../command";
import { parseInput, textQuery, type QueryValue } from "../context";
import { cursorPageFlags } from "../paging";

/** `hookrelay audit list`: the organization's audit trail (docs/audit.md); remote needs an admin or owner, local mode is the owner. */
export function registerAudit(program: Command) {
  const audit = noun(program, "audit", "The audit log: who changed what, when and from where (admins and owners)", [
    "hookrelay audit list",
    "hookrelay audit list --resource-type connection --after 2026-01-01T00:00:00Z",
  ]);

  act(
    cursorPageFlags(
      verb(audit, "list", "List audit entries, newest first, in pages; filters narrow them", [
        "hookrelay audit list --action delete",
        "hookrelay audit list --actor-id 0123456789abcdef0123456789abcdef --json | jq '.entries[].changes'",
        "hookrelay audit list --resource-id src_0123456789abcdef0123456789abcdef --data-dir /var/lib/hookrelay",
      ])
        .option("--actor-id <id>", "a user's id, an API key's id, or an application's (portal)")
        .option("--resource-type <type>", "source, destination, connection, api_key, environment, …")
        .option("--resource-id <id>", "one resource's entries")
        .option("--action <action>", "create, update, delete, retry, replay, rotate_secret, revoke, login, login_failed, …")
        .option("--after <time>", "entries made at or after this ISO time")
        .option("--before <time>", "entries made before this ISO time"),
    ),
    async (ctx, o) => {
      const query: Record<string, QueryValue> = {
        actor_id: o.actorId,
        resource_type: o.resourceType,
        resource_id: o.resourceId,
        action: o.action,
        after: o.after,
        before: o.before,
        cursor: o.cursor,
        limit: o.limit,
      };
      const res = await ctx.run<{ entries: Record<string, unknown>[]; has_more: boolean; next_cursor: string | null }>({
        method: "GET",
        path: "/audit-log",
        query,
        expect: "entries",
        local: async (deps, scope) => (await import("../../src/domain/auditLog")).listAuditLog(deps, scope, parseInput(listAuditQuery, textQuery(query), "query")),
      });
      ctx.out.result(res, {
        list: "entries",
        columns: ["created_at", { key: "actor_name", header: "actor", get: (r) => String(r.actor_name ?? r.actor_id ?? r.actor_type) }, "action", "resource_type", "resource_id", "ip"],
        empty: "No audit entries match.",
      });
      // Said on stderr, so a pipe only gets rows.
      if (res.next_cursor) ctx.out.note(`more entries: --cursor ${res.next_cursor}`);
    },
  );
}

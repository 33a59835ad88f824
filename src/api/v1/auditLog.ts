import { auditList, listAuditQuery } from "../../contracts/audit";
import { listAuditLog } from "../../domain/auditLog";
import { requires } from "../middleware/auth";
import { operation, responses, type Api } from "../openapi";

/** The audit trail of the caller's organization (docs/audit.md): admins and owners only. */
export function registerAuditLogRoutes(api: Api) {
  operation(
    api,
    {
      tags: ["audit"],
      method: "get",
      path: "/audit-log",
      summary: "Who changed what, when and from where: the organization's audit entries, newest first",
      description: "Filters: actor_id, resource_type, resource_id, action, after (inclusive) and before (exclusive) as ISO times. Pages of `limit` (default 50, at most 100); `next_cursor` fetches the next.",
      middleware: [requires("administer")],
      request: { query: listAuditQuery },
      responses: responses({ status: 200, schema: auditList }, [400, 401, 403]),
    },
    async (c, { query }) => c.json(await listAuditLog(c.get("deps"), c.get("scope"), query), 200),
  );
}

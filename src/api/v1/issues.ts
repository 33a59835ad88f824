import { issueBody, issueDetail, issueList, listIssuesQuery, updateIssueInput } from "../../contracts/issues";
import { getIssue, listIssues, updateIssue } from "../../domain/issues";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Issues (docs/decisions.md D8; docs/alerts.md, "Issues"): opened and resolved by delivery outcomes, triaged here. */
export function registerIssueRoutes(api: Api) {
  const tags = ["issues"];
  operation(
    api,
    {
      method: "get",
      path: "/issues",
      tags,
      summary: "List issues, newest first (by when they first opened); filter by status and destination_id",
      request: { query: listIssuesQuery },
      responses: responses({ status: 200, schema: issueList }, [400, 401]),
    },
    async (c, { query }) => c.json(await listIssues(c.get("deps"), c.get("scope"), query), 200),
  );
  operation(
    api,
    {
      method: "get",
      path: "/issues/{id}",
      tags,
      summary: "Get an issue with its last failed attempt",
      request: { params: idParam },
      responses: responses({ status: 200, schema: issueDetail }, [401, 404]),
    },
    async (c, { params }) => c.json(await getIssue(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "patch",
      path: "/issues/{id}",
      tags,
      summary: "Acknowledge, resolve, ignore, reopen or snooze an issue",
      request: { params: idParam, ...jsonBody(updateIssueInput) },
      responses: responses({ status: 200, schema: issueBody }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await updateIssue(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
}

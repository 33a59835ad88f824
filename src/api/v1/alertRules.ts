import { successBody } from "../../contracts/common";
import { alertHistoryList, alertHistoryQuery, alertRuleBody, alertRuleDetail, alertRuleList, createAlertRuleInput, listAlertRulesQuery, updateAlertRuleInput } from "../../contracts/alertRules";
import { createAlertRule, deleteAlertRule, getAlertRule, listAlertHistory, listAlertRules, updateAlertRule } from "../../domain/alertRules";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Alert rules and their history (docs/decisions.md D9; docs/alerts.md, "Alert rules"). */
export function registerAlertRuleRoutes(api: Api) {
  const tags = ["alert-rules"];
  operation(
    api,
    {
      method: "post",
      path: "/alert-rules",
      tags,
      summary: "Create an alert rule; rule_config is checked against rule_type, channel_ids must name existing channels",
      request: jsonBody(createAlertRuleInput),
      responses: responses({ status: 201, schema: alertRuleBody }, [400, 401, 403, 404]),
    },
    async (c, { body }) => c.json(await createAlertRule(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    {
      method: "get",
      path: "/alert-rules",
      tags,
      summary: "List alert rules, newest first",
      request: { query: listAlertRulesQuery },
      responses: responses({ status: 200, schema: alertRuleList }, [400, 401]),
    },
    async (c, { query }) => c.json(await listAlertRules(c.get("deps"), c.get("scope"), query), 200),
  );
  operation(
    api,
    { method: "get", path: "/alert-rules/{id}", tags, summary: "Get an alert rule with its recent history", request: { params: idParam }, responses: responses({ status: 200, schema: alertRuleDetail }, [401, 404]) },
    async (c, { params }) => c.json(await getAlertRule(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "get",
      path: "/alert-rules/{id}/history",
      tags,
      summary: "A rule's whole history, newest first, with pagination as for events",
      request: { params: idParam, query: alertHistoryQuery },
      responses: responses({ status: 200, schema: alertHistoryList }, [400, 401, 404]),
    },
    async (c, { params, query }) => c.json(await listAlertHistory(c.get("deps"), c.get("scope"), params.id, query), 200),
  );
  operation(
    api,
    {
      method: "patch",
      path: "/alert-rules/{id}",
      tags,
      summary: "Update an alert rule (partial); enabled turns it on and off",
      request: { params: idParam, ...jsonBody(updateAlertRuleInput) },
      responses: responses({ status: 200, schema: alertRuleBody }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await updateAlertRule(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    { method: "delete", path: "/alert-rules/{id}", tags, summary: "Delete an alert rule and its history", request: { params: idParam }, responses: responses({ status: 200, schema: successBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await deleteAlertRule(c.get("deps"), c.get("scope"), params.id), 200),
  );
}

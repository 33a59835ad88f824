import { applyConfigInput, applyConfigResult, exportConfigQuery, relayFile } from "../../contracts/relayFile";
import { applyConfig } from "../../domain/configApply";
import { exportConfig } from "../../domain/configExport";
import { renderRelayFile } from "../../domain/configText";
import { applicationsSection } from "../../outbound/configApplications";
import { requires } from "../middleware/auth";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** Configuration as code (docs/config-as-code.md): the environment as one relay file, and a file applied to it. */
export function registerConfigRoutes(api: Api) {
  const tags = ["config"];
  operation(
    api,
    {
      method: "get",
      path: "/config/export",
      tags,
      summary: "The environment's configuration as one relay file (YAML by default); secrets as ${NAME} references unless include_secrets",
      description: "Needs the developer role; include_secrets needs the admin role and an API key of scope *. Two exports of one state are the same bytes. format=json answers the document itself.",
      request: { query: exportConfigQuery },
      responses: {
        ...responses({ status: 200, schema: relayFile, description: "The relay file: application/json for format=json, application/yaml otherwise" }, [400, 401, 403, 409]),
      },
    },
    async (c, { query }) => {
      const doc = await exportConfig(c.get("deps"), c.get("scope"), { includeSecrets: query.include_secrets }, [applicationsSection]);
      return c.body(renderRelayFile(doc, query.format), 200, { "Content-Type": query.format === "json" ? "application/json" : "application/yaml; charset=utf-8" });
    },
  );
  operation(
    api,
    {
      method: "post",
      path: "/config/apply",
      tags,
      summary: "Make the environment match a relay file, all or nothing: create, update, and with prune delete; dry_run only plans",
      description: "Needs the admin role. The document's secret references must be resolved already (the CLI reads them from its environment); the server reads none. Every change is audited with the caller.",
      middleware: [requires("administer")],
      request: jsonBody(applyConfigInput),
      responses: responses({ status: 200, schema: applyConfigResult }, [400, 401, 403, 409]),
    },
    async (c, { body }) => c.json(await applyConfig(c.get("deps"), c.get("scope"), body.document, { dryRun: body.dry_run, prune: body.prune }, [applicationsSection]), 200),
  );
}

import { appParam } from "../../contracts/applications";
import { createMessageInput, listMessageAttemptsQuery, listMessagesQuery, messageAttempts, messageBody, messageList, messageParams, resendInput, resendResult } from "../../contracts/messages";
import { getMessage, listMessageAttempts, listMessages } from "../../outbound/messages";
import { resendMessage } from "../../outbound/resend";
import { createMessage } from "../../outbound/fanout";
import { AppError } from "../../contracts/errors";
import { portalOperation } from "../middleware/portal";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** An application's messages (docs/decisions.md D10, docs/outbound.md). Reading and resending are open to its portal link; sending is not. */
export function registerMessageRoutes(api: Api) {
  const tags = ["messages"];
  const base = "/applications/{appId}/messages";
  operation(
    api,
    {
      tags,
      method: "post",
      path: base,
      summary: "Send a message to the application's endpoints",
      description:
        "Fans out to every active, unexpired endpoint whose filter_types admit event_type, each delivery signed per Standard Webhooks (webhook-id is the message id). `id` is an idempotency key per application: the same id answers the same message and sends nothing again. When an event type of that name has a json_schema, a payload that violates it → 422 schema_violation (details.errors). A disabled application → 409.",
      request: { params: appParam, ...jsonBody(createMessageInput) },
      responses: responses({ status: 202, schema: messageBody }, [400, 401, 403, 404, 409, 413, 422]),
    },
    async (c, { params, body }) => {
      const { message } = await createMessage(c.get("deps"), c.get("scope"), params.appId, body);
      return c.json({ message }, 202);
    },
  );
  portalOperation(
    api,
    {
      tags,
      method: "get",
      path: base,
      summary: "List the application's messages, newest first, in cursor pages",
      request: { params: appParam, query: listMessagesQuery },
      responses: responses({ status: 200, schema: messageList }, [400, 401, 403, 404]),
    },
    async (c, { params, query }) => c.json(await listMessages(c.get("deps"), c.get("scope"), params.appId, query), 200),
  );
  portalOperation(
    api,
    { tags, method: "get", path: `${base}/{id}`, summary: "Get a message (by id or idempotency key)", request: { params: messageParams }, responses: responses({ status: 200, schema: messageBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await getMessage(c.get("deps"), c.get("scope"), params.appId, params.id), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "get",
      path: `${base}/{id}/attempts`,
      summary: "The message's delivery attempts (every endpoint, or endpoint_id's), newest first",
      request: { params: messageParams, query: listMessageAttemptsQuery },
      responses: responses({ status: 200, schema: messageAttempts }, [400, 401, 403, 404]),
    },
    async (c, { params, query }) => c.json(await listMessageAttempts(c.get("deps"), c.get("scope"), params.appId, params.id, query), 200),
  );
  portalOperation(
    api,
    {
      tags,
      method: "post",
      path: `${base}/{id}/resend`,
      summary: "Send the message to one endpoint again",
      description: "Body {endpoint_id}. A new delivery chain (trigger_type manual) that takes an earlier one out of the DLQ; a delivery still outstanding is made due now instead. A disabled or expired endpoint → 409. Through a portal link, at most HOOKRELAY_PORTAL_RESENDS_PER_MINUTE (10) resends a minute per application; more → 429 with Retry-After.",
      request: { params: messageParams, ...jsonBody(resendInput) },
      responses: responses({ status: 202, schema: resendResult }, [400, 401, 403, 404, 409, 429]),
    },
    async (c, { params, body }) => {
      try {
        return c.json(await resendMessage(c.get("deps"), c.get("scope"), params.appId, params.id, body), 202);
      } catch (err) {
        // A portal link's resends are limited per minute (docs/outbound.md): say when to come back.
        const wait = err instanceof AppError && err.code === "rate_limited" ? (err.details as { retry_after_seconds?: number } | undefined)?.retry_after_seconds : undefined;
        if (wait) c.header("Retry-After", String(wait));
        throw err;
      }
    },
  );
}

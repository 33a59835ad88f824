import { bulkRetryFilters, bulkRetryStarted, retryEventInput, retryResult } from "../../contracts/eventRetry";
import { startBulkRetry } from "../../domain/bulkRetry";
import { retryEvent } from "../../domain/retries";
import { idParam, operation, responses, type Api } from "../openapi";

/** Event retry and bulk retry (docs/decisions.md D7). Registered after the events routes. */
export function registerEventRetryRoutes(api: Api) {
  const tags = ["events"];

  // Before /events/{id}/retry for readability; the paths cannot collide (different segment counts).
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/events/retry",
      summary: "Bulk retry: retry every event GET /events would list with the same filters (a background job: GET /jobs/{job_id})",
      request: {
        query: bulkRetryFilters,
        body: { required: false, content: { "application/json": { schema: bulkRetryFilters } } },
      },
      responses: responses({ status: 202, schema: bulkRetryStarted, description: "Job started (job_id null: nothing to retry, no job)" }, [400, 401]),
    },
    async (c, { query, body }) => c.json(await startBulkRetry(c.get("deps"), c.get("scope"), { ...query, ...(body ?? {}) }), 202),
  );

  operation(
    api,
    {
      tags,
      method: "post",
      path: "/events/{id}/retry",
      summary: "Retry delivery of an event to every connected destination; a rejected event answers 409 unless the body says force: true",
      request: {
        params: idParam,
        body: { required: false, content: { "application/json": { schema: retryEventInput } } },
      },
      responses: responses({ status: 200, schema: retryResult }, [400, 401, 404, 409]),
    },
    async (c, { params, body }) => c.json(await retryEvent(c.get("deps"), c.get("scope"), params.id, { force: body?.force === true }), 200),
  );
}

import { attemptList, jobStarted, listAttemptsQuery, redriveInput } from "../../contracts/deliveryAttempts";
import { listAttempts } from "../../domain/deliveryAttempts";
import { startRedrive } from "../../domain/redrive";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** Delivery attempts list and DLQ redrive (docs/delivery.md, "Delivery attempts API"; docs/decisions.md D7). */
export function registerDeliveryAttemptRoutes(api: Api) {
  const tags = ["delivery-attempts"];

  operation(
    api,
    {
      tags,
      method: "get",
      path: "/delivery-attempts",
      summary: "List delivery attempts, newest first; is_dlq=1 lists the dead-letter queue",
      request: { query: listAttemptsQuery },
      responses: responses({ status: 200, schema: attemptList }, [400, 401]),
    },
    async (c, { query }) => c.json(await listAttempts(c.get("deps"), c.get("scope"), query), 200),
  );

  operation(
    api,
    {
      tags,
      method: "post",
      path: "/delivery-attempts/redrive",
      summary: "Re-queue every DLQ delivery of a destination and/or connection (a background job: GET /jobs/{job_id})",
      request: jsonBody(redriveInput),
      responses: responses({ status: 202, schema: jobStarted, description: "Job started" }, [400, 401, 404]),
    },
    async (c, { body }) => c.json(await startRedrive(c.get("deps"), c.get("scope"), body), 202),
  );
}

import type { Api } from "../openapi";

/** Delivery attempts list and DLQ redrive (issue 4) */
export function registerDeliveryAttemptRoutes(api: Api) {
  void api;
}

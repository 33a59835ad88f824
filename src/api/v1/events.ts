import type { Api } from "../openapi";

/** Events list, detail, SSE stream, retry (issues 3, 4) */
export function registerEventRoutes(api: Api) {
  void api;
}

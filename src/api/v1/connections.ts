import type { Api } from "../openapi";

/** Connections CRUD (issue 4) */
export function registerConnectionRoutes(api: Api) {
  void api;
}

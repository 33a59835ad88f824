import type { Api } from "../openapi";

/** Destinations CRUD (issue 4) */
export function registerDestinationRoutes(api: Api) {
  void api;
}

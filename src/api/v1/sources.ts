import type { Api } from "../openapi";

/** Sources CRUD and templates (issue 3) */
export function registerSourceRoutes(api: Api) {
  void api;
}

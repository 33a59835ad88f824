import type { Api } from "../openapi";

/** Replay jobs (issue 4) */
export function registerReplayRoutes(api: Api) {
  void api;
}

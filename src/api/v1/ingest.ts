import type { Api } from "../openapi";

/** The public ingest endpoint /ingest/src_<id> (issue 3) */
export function registerIngestRoutes(api: Api) {
  void api;
}

import type { Context } from "hono";
import type { uiAssets as UiAssets } from "../generated/ui-assets.gen";
import { notFoundHandler } from "./middleware/errors";

/** Paths the SPA fallback must never shadow. */
const reserved = /^\/(v1|healthz|readyz|metrics)(\/|$)/;

/**
 * The bundle (half a megabyte of strings) is loaded on the first request for
 * the UI, not at start-up: /healthz and the API answer without it
 * (docs/performance.md, "Start-up").
 */
let assets: typeof UiAssets | undefined;

/** Serves the embedded admin UI, with index.html for any other GET (client-side routes). */
export async function serveUi(c: Context) {
  const path = c.req.path;
  if (reserved.test(path) || (c.req.method !== "GET" && c.req.method !== "HEAD")) return notFoundHandler(c);
  const uiAssets = (assets ??= (await import("../generated/ui-assets.gen")).uiAssets);
  const asset = uiAssets[path];
  if (asset) {
    return c.body(asset.body, 200, {
      "content-type": asset.type,
      // Hashed asset names never change content; index.html must always be fresh.
      "cache-control": path === "/index.html" ? "no-cache" : "public, max-age=31536000, immutable",
    });
  }
  // A missing file (an old hashed bundle, say) is a 404, not the app shell.
  if (/\.[a-z0-9]+$/i.test(path)) return notFoundHandler(c);
  const index = uiAssets["/index.html"]!;
  return c.body(index.body, 200, { "content-type": index.type, "cache-control": "no-cache" });
}

import type { MiddlewareHandler } from "hono";
import { AppError } from "../../contracts/errors";
import type { ApiEnv } from "../openapi";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A cookie-authenticated mutation must come from our own origin. Browsers
 * send Origin on every cross-site POST/PATCH/DELETE; without Origin we fall
 * back to Referer, and with neither we refuse (API-key callers need neither).
 */
export function csrfGuard(allowedOrigins: () => string[]): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (SAFE.has(c.req.method) || c.get("scope")?.via !== "session") return next();
    const reqOrigin = new URL(c.req.url).origin;
    const claimed = c.req.header("origin") ?? originOf(c.req.header("referer"));
    if (!claimed || (claimed !== reqOrigin && !allowedOrigins().includes(claimed))) {
      throw new AppError("forbidden", "Cross-site request refused (CSRF check)");
    }
    return next();
  };
}

function originOf(url: string | undefined) {
  if (!url) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

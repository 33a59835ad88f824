/**
 * The one API client: fetch with the session cookie, JSON in and out, and the
 * contract's error body `{error: {code, message, details}}` turned into an ApiError
 * whose field messages forms show next to the field they concern.
 */
import type { ErrorCode } from "../../src/contracts/errors";
import { issueLine, readableMessage, type FieldIssue } from "./issues";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | "network" | "bad_response",
    message: string,
    readonly details: unknown = undefined,
  ) {
    super(message);
  }

  /** Validation details as `{field, message}`; `body.name` → `name`, `query.limit` → `limit`. */
  get issues(): FieldIssue[] {
    if (!Array.isArray(this.details)) return [];
    return this.details.flatMap((d): FieldIssue[] => {
      if (!d || typeof d !== "object") return [];
      const o = d as Record<string, unknown>;
      const raw = typeof o.field === "string" ? o.field : typeof o.path === "string" ? o.path : "";
      const message = typeof o.message === "string" ? o.message : "is invalid";
      return [{ field: raw.replace(/^(body|query|param|params|json)\./, ""), message }];
    });
  }

  /** Field name → message in words, for the form fields that exist; the first message per field wins. */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const i of this.issues) if (i.field && !(i.field in out)) out[i.field] = readableMessage(i.message);
    return out;
  }
}

/** Called when the session is gone (a 401 on an authenticated call): the app shows the login page. */
let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(fn: () => void) {
  onUnauthorized = fn;
}

/**
 * The consumer portal's credential (ui/src/pages/Portal.tsx): its link's token,
 * sent as `Authorization: Bearer` instead of the session cookie, so the portal
 * never acts with an admin session the browser may also hold.
 */
let bearerToken: string | null = null;
export function setBearerToken(token: string | null) {
  bearerToken = token;
}

/**
 * The environment the admin session acts in, sent as X-Hookrelay-Env
 * (docs/api.md, "Environments"); null: the one the server remembers as the
 * user's last used.
 */
let environmentRef: string | null = null;
export function setEnvironment(ref: string | null) {
  environmentRef = ref;
}

/**
 * The organization the admin session acts in, sent as X-Hookrelay-Org
 * (docs/teams.md, "Organizations"); null: the one the server remembers.
 */
let organizationRef: string | null = null;
export function setOrganization(ref: string | null) {
  organizationRef = ref;
}

type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query) {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes("?") ? "&" : "?"}${s}` : path;
}

async function request<T>(method: string, path: string, body?: unknown, opts: { query?: Query; quiet401?: boolean } = {}): Promise<T> {
  const url = "/v1" + withQuery(path, opts.query);
  let res: Response;
  try {
    const headers: Record<string, string> = body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" };
    if (bearerToken) headers.authorization = `Bearer ${bearerToken}`;
    else {
      if (organizationRef) headers["x-hookrelay-org"] = organizationRef;
      if (environmentRef) headers["x-hookrelay-env"] = environmentRef;
    }
    res = await fetch(url, {
      method,
      credentials: bearerToken ? "omit" : "same-origin",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", "Cannot reach the hookrelay server. Is it running?");
  }
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      if (res.ok) throw new ApiError(res.status, "bad_response", "The server sent a response that is not JSON");
    }
  }
  if (!res.ok) {
    const err = (data as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    const e = new ApiError(res.status, (err?.code as ErrorCode) ?? "internal", err?.message ?? `Request failed (${res.status} ${res.statusText})`, err?.details);
    if (res.status === 401 && !opts.quiet401) onUnauthorized();
    throw e;
  }
  return data as T;
}

export const api = {
  get: <T>(path: string, query?: Query, opts?: { quiet401?: boolean }) => request<T>("GET", path, undefined, { query, ...opts }),
  post: <T>(path: string, body: unknown = {}, opts?: { quiet401?: boolean }) => request<T>("POST", path, body, opts),
  patch: <T>(path: string, body: unknown) => request<T>("PATCH", path, body),
  put: <T>(path: string, body: unknown) => request<T>("PUT", path, body),
  del: <T>(path: string) => request<T>("DELETE", path),
};

/** A readable one-line message for any thrown value. */
export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) {
    const issues = e.issues;
    if (issues.length > 0 && e.code === "validation_error") {
      return `${e.message}: ${issues.map(issueLine).join("; ")}`;
    }
    return e.message;
  }
  if (e instanceof Error) return e.message;
  return String(e);
}

/**
 * Remote mode: the HTTP client of the /v1 API. It sends the credentials,
 * tells hookrelay's answers from some other server's, and turns error
 * answers into CliErrors with a stable exit code.
 */
import { describeNetworkError } from "../../src/outgoing/networkErrors";
import type { ErrorBody } from "../../src/contracts/errors";
import { apiErrorToCli, CliError, EXIT, exitCodeForStatus } from "../errors";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type QueryValue = string | number | boolean | null | undefined;

const STATUS_CODE: Record<number, ErrorBody["error"]["code"]> = { 413: "payload_too_large", 429: "rate_limited" };

export type Auth = { kind: "api_key"; key: string } | { kind: "session"; cookie: string; profile: string } | { kind: "none" };

export class RemoteClient {
  constructor(
    readonly url: string,
    readonly auth: Auth,
    /** Sent as X-Hookrelay-Env: the environment a session acts in (an API key's must be its own). */
    readonly envRef?: string,
    /** Sent as X-Hookrelay-Org: the organization a session acts in (an API key's must be its own). */
    readonly orgRef?: string,
  ) {}

  /** Credentials, plus Origin on session mutations (the server's CSRF same-origin check). */
  headers(method: Method | "GET" = "GET"): Record<string, string> {
    const h: Record<string, string> = { accept: "application/json", "user-agent": "hookrelay-cli" };
    if (this.auth.kind === "api_key") h["x-api-key"] = this.auth.key;
    if (this.orgRef !== undefined && this.auth.kind !== "none") h["x-hookrelay-org"] = this.orgRef;
    if (this.envRef !== undefined && this.auth.kind !== "none") h["x-hookrelay-env"] = this.envRef;
    if (this.auth.kind === "session") {
      h.cookie = this.auth.cookie;
      if (method !== "GET") h.origin = new URL(this.url).origin;
    }
    return h;
  }

  endpoint(p: string, query?: Record<string, QueryValue>) {
    const u = new URL(this.url + "/v1" + p);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async fetch(method: Method, p: string, opts: { query?: Record<string, QueryValue>; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}) {
    const headers = { ...this.headers(method), ...opts.headers };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    try {
      return await fetch(this.endpoint(p, opts.query), { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), signal: opts.signal, redirect: "manual" });
    } catch (err) {
      if ((err as Error)?.name === "AbortError") throw err;
      throw new CliError(`cannot reach ${this.url}: ${describeNetworkError(err)}`, EXIT.error, "connection_failed");
    }
  }

  /**
   * A JSON request whose answer must be hookrelay's: a JSON object with the
   * `expect` key, or hookrelay's error body. Anything else (an HTML page, `{}`,
   * a redirect) means the URL is some other server, whatever its status.
   */
  async request<T>(method: Method, p: string, opts: { query?: Record<string, QueryValue>; body?: unknown; expect: string }): Promise<T> {
    const res = await this.fetch(method, p, opts);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (res.ok) {
      if (isObject(parsed) && opts.expect in parsed) return parsed as T;
      throw this.notHookrelay(method, p, res, parsed === undefined ? "not JSON" : `JSON without "${opts.expect}"`);
    }
    throw this.failure(method, p, res, parsed);
  }

  /** The CliError for a non-2xx answer: hookrelay's error body, a server error, or some other server. */
  failure(method: Method, p: string, res: Response, parsed: unknown): CliError {
    if (isErrorBody(parsed)) return apiErrorToCli(res.status, parsed, this.hint(res.status, parsed.error.code));
    // What a proxy in front of the server answers on its own (gateway down, body too large, throttled).
    if (res.status >= 500 || res.status === 413 || res.status === 429) {
      const body: ErrorBody = { error: { code: STATUS_CODE[res.status] ?? "internal", message: `HTTP ${res.status} from ${this.url}` } };
      return apiErrorToCli(res.status, body);
    }
    const location = res.headers.get("location");
    return this.notHookrelay(method, p, res, location ? `a redirect to ${location}` : "no hookrelay error body", exitCodeForStatus(res.status));
  }

  notHookrelay(method: Method, p: string, res: Response, what: string, exitCode: number = EXIT.error) {
    const type = res.headers.get("content-type")?.split(";")[0];
    const message = `not a hookrelay server at ${this.url}? (${method} /v1${p} answered HTTP ${res.status}${type ? ` ${type}` : ""}, ${what})`;
    return new CliError(message, exitCode, "bad_response", { error: { code: "bad_response", message } });
  }

  private hint(status: number, code: string) {
    if (status === 401 && this.auth.kind === "session") return `the saved session of profile "${this.auth.profile}" is no longer valid: run \`hookrelay login\``;
    if (status === 401 && this.auth.kind === "none") return "log in with `hookrelay login`, or pass --api-key / HOOKRELAY_API_KEY";
    if (code === "session_required") return "this needs a logged-in session: run `hookrelay login` (an API key cannot manage keys)";
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === "object" && v !== null && typeof (v as ErrorBody).error === "object" && typeof (v as ErrorBody).error?.code === "string";


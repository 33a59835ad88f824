/**
 * One code path for two modes. A command describes an operation once: its
 * remote form (method, path, query, body of the /v1 API) and its local form
 * (the domain call the route makes). Remote mode sends the request
 * (context/remote.ts); local mode opens the store `serve` would
 * (context/local.ts) and calls the same domain code in the default scope.
 * Which of the two, and on what instance, comes from context/target.ts.
 * Both return the object the API returns; errors of either become a CliError with the API's error body and a stable exit code.
 */
import type { z } from "zod";
import { parseOrThrow } from "../src/contracts/errors";
import type { Deps, Scope } from "../src/domain/deps";
import { appErrorToCli, CliError, EXIT } from "./errors";
import { Output } from "./output";
import { openLocal, type LocalStore } from "./context/local";
import { RemoteClient, type Method, type QueryValue } from "./context/remote";
import { resolveTarget, type Env, type GlobalFlags } from "./context/target";

export type { Method, QueryValue };

export interface Operation<T> {
  method: Method;
  /** Path under /v1, ids already in it (use `path` to encode them). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /**
   * The top-level key every hookrelay answer to this call has (`sources`,
   * `job_id`, …). A 2xx answer without it comes from some other server.
   */
  expect: string;
  /** The same operation without HTTP: the domain function the route calls. */
  local: (deps: Deps, scope: Scope) => Promise<T>;
}

export interface Context {
  readonly mode: "remote" | "local";
  readonly out: Output;
  readonly json: boolean;
  /** What the command works on, for messages: the server's URL, or where the local data lives. */
  readonly where: string;
  run<T>(op: Operation<T>): Promise<T>;
  /** Remote mode only: the HTTP client (streams, login). */
  readonly remote?: RemoteClient;
  /** Local mode only: deps and scope for domain calls outside an Operation. */
  readonly local?: LocalStore;
  close(): Promise<void>;
}

/** Builds `/sources/<id>/…` with every id segment URL-encoded. */
export function path(strings: TemplateStringsArray, ...ids: (string | number)[]) {
  return strings.reduce((acc, s, i) => acc + s + (i < ids.length ? encodeURIComponent(String(ids[i])) : ""), "");
}

/**
 * Local mode validates input with the same contracts schema the route uses,
 * and reports problems in the same shape (`details: [{field, message}]`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, target: "body" | "query" = "body"): z.output<S> {
  return parseOrThrow(schema, value, "Request validation failed", [target]);
}

/** Query values as the route sees them: text. */
export function textQuery(q: Record<string, QueryValue>) {
  return Object.fromEntries(Object.entries(q).flatMap(([k, v]) => (v === undefined || v === null ? [] : [[k, String(v)]])));
}

const NO_TARGET =
  "not logged in and no server chosen: run `hookrelay login --url URL`, pass --url with --api-key (or HOOKRELAY_URL/HOOKRELAY_API_KEY), or work on a local data dir with --data-dir (or a PostgreSQL database with --database-url)";

export async function createContext(flags: GlobalFlags, opts: { out?: Output; env?: Env } = {}): Promise<Context> {
  const json = flags.json === true;
  const out = opts.out ?? new Output(json);
  const target = resolveTarget(flags, opts.env);
  if (target.mode === "none") throw new CliError(NO_TARGET, EXIT.auth, "unauthorized");

  if (target.mode === "remote") {
    const remote = new RemoteClient(target.url, target.auth, target.envRef, target.orgRef);
    return {
      mode: "remote",
      out,
      json,
      where: remote.url,
      remote,
      run: (op) => remote.request(op.method, op.path, { query: op.query, body: op.body, expect: op.expect }),
      close: async () => {},
    };
  }

  const local = await openLocal(target, out);
  return {
    mode: "local",
    out,
    json,
    where: local.location,
    local,
    async run(op) {
      try {
        // Round-trip through JSON so local output is byte-for-byte what the API would send.
        return JSON.parse(JSON.stringify(await op.local(local.deps, local.scope)));
      } catch (err) {
        throw appErrorToCli(err);
      }
    },
    close: () => local.close(),
  };
}

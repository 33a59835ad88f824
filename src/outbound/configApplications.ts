import { asc, eq } from "drizzle-orm";
import { AppError } from "../contracts/errors";
import { endpointSecretRefName, filePath, relayApplication, type ConfigChange, type FieldChange } from "../contracts/relayFile";
import { applicationEndpoints, applications, destinations } from "../db/schema";
import { errorAt } from "../domain/configApply";
import type { ConfigSection } from "../domain/configSection";
import { canonical, sortKeys } from "../domain/configState";
import type { Deps, Scope } from "../domain/deps";
import { inScope } from "../domain/scope";
import { createApplication, deleteApplication, updateApplication } from "./applications";
import { createEndpoint, deleteEndpoint, rotateEndpointSecret, updateEndpoint } from "./endpoints";

/**
 * Applications and their endpoints in the relay file (docs/config-as-code.md):
 * applications keyed by name, endpoints by url within their application. A
 * changed endpoint secret is a rotation (the old one keeps signing through
 * the overlap, docs/outbound.md). Handed to the domain's export and apply by
 * the edges (src/domain/configSection.ts).
 */

type Entry = Record<string, unknown>;
type RelayApplication = ReturnType<typeof relayApplication.parse>;
interface EndpointState {
  id: string;
  entry: Entry;
}
interface AppState {
  id: string;
  entry: Entry;
  endpoints: Map<string, EndpointState>;
}

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

async function readApplications(deps: Deps, scope: Scope): Promise<Map<string, AppState>> {
  const apps = await deps.db.select().from(applications).where(inScope(applications, scope)).orderBy(asc(applications.name), asc(applications.id));
  const rows = await deps.db
    .select({ endpoint: applicationEndpoints, destination: destinations })
    .from(applicationEndpoints)
    .innerJoin(destinations, eq(destinations.id, applicationEndpoints.destinationId))
    .where(inScope(applicationEndpoints, scope));
  const out = new Map<string, AppState>();
  for (const app of apps) {
    if (out.has(app.name)) throw new AppError("conflict", `Two applications are named "${app.name}": a relay file names each once; rename one first`);
    out.set(app.name, {
      id: app.id,
      entry: {
        name: app.name,
        // A uid the application was given; one that is its id was never chosen.
        ...(app.uid !== app.id ? { uid: app.uid } : {}),
        description: app.description,
        metadata: parsed(app.metadata),
        rate_limit: app.rateLimit,
        status: app.status,
        allow_private_endpoints: app.allowPrivateEndpoints === 1,
      },
      endpoints: new Map(),
    });
  }
  const byId = new Map([...out.values()].map((a) => [a.id, a]));
  for (const { endpoint: e, destination: d } of rows) {
    const app = byId.get(e.applicationId);
    if (!app) continue;
    let secret: string;
    try {
      secret = deps.secrets.open(d.signingSecret);
    } catch {
      throw new AppError("conflict", `The signing secret of endpoint ${d.url} cannot be decrypted with the current HOOKRELAY_SECRET_KEY`);
    }
    app.endpoints.set(d.url, {
      id: e.id,
      entry: {
        url: d.url,
        description: e.description,
        filter_types: parsed(e.filterTypes),
        rate_limit_per_second: d.rateLimitPerSecond,
        retry_schedule: parsed(d.retrySchedule),
        signing_algorithm: d.signingAlgorithm,
        secret,
        expires_at: e.expiresAt,
        status: d.status,
        ordered: e.ordered === 1,
        on_dlq: e.onDlq,
      },
    });
  }
  return out;
}

/** A file's endpoint value as stored: [] filters nothing, as null does; a date in the form stored. */
function normalized(field: string, value: unknown): unknown {
  if (field === "filter_types" && Array.isArray(value)) return value.length === 0 ? null : [...new Set(value)];
  if (field === "expires_at" && typeof value === "string") return new Date(value).toISOString();
  return value;
}

function changed(wanted: Entry, current: Entry): FieldChange[] {
  const out: FieldChange[] = [];
  for (const field of Object.keys(wanted).sort()) {
    const after = normalized(field, wanted[field]);
    if (after === undefined || field === "endpoints") continue;
    const before = current[field] ?? null;
    if (canonical(after) === canonical(before)) continue;
    out.push(field === "secret" ? { field, secret: true } : { field, before, after });
  }
  return out;
}

const pick = (entry: Entry, fields: string[]) => Object.fromEntries(fields.filter((f) => entry[f] !== undefined).map((f) => [f, normalized(f, entry[f])]));

export const applicationsSection: ConfigSection = {
  key: "applications",

  async export(deps, scope, { includeSecrets }) {
    const apps = [...(await readApplications(deps, scope)).values()];
    return apps.map((app) =>
      sortKeys({
        ...app.entry,
        endpoints: [...app.endpoints.values()]
          .map((e) => (includeSecrets ? e.entry : { ...e.entry, secret: `\${${endpointSecretRefName(String(app.entry.name), String(e.entry.url))}}` }))
          .sort((a, b) => (String(a.url) < String(b.url) ? -1 : String(a.url) > String(b.url) ? 1 : 0)),
      }),
    );
  },

  async plan(deps, scope, raw, { prune }) {
    const entries = raw as RelayApplication[];
    const state = await readApplications(deps, scope);
    const changes: ConfigChange[] = [];
    const steps: { where: string; what: string; change: () => Promise<unknown> }[] = [];
    const deletes: typeof steps = [];
    const step = (planned: ConfigChange, where: string, change: () => Promise<unknown>, list = steps) => {
      changes.push(planned);
      list.push({ where, what: `${planned.action} ${planned.kind} "${planned.name}"`, change });
    };
    entries.forEach((app, i) => {
      const { endpoints = [], ...fields } = app as RelayApplication & Entry;
      const where = filePath(["applications", i]);
      const current = state.get(app.name);
      // The application's id once it exists: created in this apply, or as it was.
      let appId = current?.id;
      const appRef = () => appId!;
      if (!current) step({ action: "create", kind: "application", name: app.name, fields: [] }, where, async () => (appId = (await createApplication(deps, scope, fields as never)).application.id));
      else {
        const diff = changed(fields, current.entry);
        if (diff.length > 0) step({ action: "update", kind: "application", name: app.name, fields: diff }, where, () => updateApplication(deps, scope, appRef(), pick(fields, diff.map((d) => d.field))));
      }
      endpoints.forEach((e: Entry, j: number) => {
        const at = filePath(["applications", i, "endpoints", j]);
        const name = `${app.name} ${String(e.url)}`;
        const existing = current?.endpoints.get(String(e.url));
        if (!existing) return step({ action: "create", kind: "endpoint", name, fields: [] }, at, () => createEndpoint(deps, scope, appRef(), e as never));
        const diff = changed(e, existing.entry);
        if (diff.length === 0) return;
        const fieldsChanged = diff.map((d) => d.field);
        step({ action: "update", kind: "endpoint", name, fields: diff }, at, async () => {
          // A new key is a rotation (its prefix chooses the algorithm); anything else an update.
          const rest = fieldsChanged.filter((f) => f !== "secret" && !(fieldsChanged.includes("secret") && f === "signing_algorithm"));
          if (rest.length > 0) await updateEndpoint(deps, scope, appRef(), existing.id, pick(e, rest));
          if (fieldsChanged.includes("secret")) await rotateEndpointSecret(deps, scope, appRef(), existing.id, { secret: String(e.secret) });
        });
      });
      if (prune && current) {
        const named = new Set(endpoints.map((e: Entry) => String(e.url)));
        for (const [url, existing] of current.endpoints) {
          if (!named.has(url)) step({ action: "delete", kind: "endpoint", name: `${app.name} ${url}`, fields: [] }, `endpoint "${url}" of application "${app.name}"`, () => deleteEndpoint(deps, scope, current.id, existing.id), deletes);
        }
      }
    });
    if (prune) {
      const named = new Set(entries.map((a) => a.name));
      for (const [name, app] of state) if (!named.has(name)) step({ action: "delete", kind: "application", name, fields: [] }, `application "${name}"`, () => deleteApplication(deps, scope, app.id), deletes);
    }
    return {
      changes,
      async carryOut() {
        for (const s of [...steps, ...deletes]) {
          try {
            await s.change();
          } catch (err) {
            throw errorAt(err, s.where, s.what);
          }
        }
      },
    };
  },
};

/**
 * What the outbound pages (an application's endpoints and messages) share
 * between the admin UI and the consumer portal: where they are, how their
 * API paths and links are built, and how delivery attempts name endpoints
 * and messages.
 */
import type { Application, DeliveryAttempt, Endpoint } from "./types";

/**
 * Where an application's pages live. The admin UI shows them under
 * `/applications/<id>`; the consumer portal under `/portal`, where sending is
 * not offered (its link does not grant it) and nothing links to admin pages.
 */
export interface AppPlace {
  app: Application;
  /** UI path of the application's page; its endpoints and messages are below it. */
  base: string;
  portal: boolean;
}

/** An API path under the application: `/applications/<id>/endpoints`, … */
export function appPath(place: AppPlace, rest = "") {
  return `/applications/${encodeURIComponent(place.app.id)}${rest}`;
}

export const endpointPath = (place: AppPlace, id: string, rest = "") => appPath(place, `/endpoints/${encodeURIComponent(id)}${rest}`);
export const messagePath = (place: AppPlace, id: string, rest = "") => appPath(place, `/messages/${encodeURIComponent(id)}${rest}`);

/** UI links. */
export const endpointPage = (place: AppPlace, id: string) => `${place.base}/endpoints/${id}`;
export const messagePage = (place: AppPlace, id: string) => `${place.base}/messages/${id}`;

/**
 * An endpoint delivers through a hidden destination `dst_<endpoint id>` and a
 * message is stored as the event `evt_<message id>` (docs/outbound.md): an
 * attempt names them that way.
 */
export const endpointIdOf = (a: Pick<DeliveryAttempt, "destination_id">) => a.destination_id.replace(/^dst_/, "");
export const messageIdOf = (a: Pick<DeliveryAttempt, "event_id">) => a.event_id.replace(/^evt_/, "");

/** An endpoint in a sentence or a cell: its description when it has one, else its URL. */
export function endpointLabel(e: Pick<Endpoint, "url" | "description">) {
  return e.description?.trim() || e.url;
}

/** filter_types arrives as JSON text; null (or []) means every event type. */
export function filterTypesOf(e: Pick<Endpoint, "filter_types">): string[] | null {
  if (!e.filter_types) return null;
  try {
    const v = JSON.parse(e.filter_types) as unknown;
    return Array.isArray(v) && v.length > 0 ? v.map(String) : null;
  } catch {
    return null;
  }
}

/** Whether an endpoint's expires_at has passed: it receives nothing then. */
export const isExpired = (e: Pick<Endpoint, "expires_at">, now = Date.now()) => e.expires_at !== null && Date.parse(e.expires_at) <= now;

/** The event types an application's messages can carry (for the filter and the send form). */
import { api } from "../../api";
import { useLoad } from "../../hooks";
import { appPath, type AppPlace } from "../../outbound";
import type { EventType } from "../../types";

export function useEventTypes(place: AppPlace) {
  return useLoad(() => api.get<{ event_types: EventType[] }>(appPath(place, "/event-types")), [place.app.id]);
}

import { api } from "../../api";
import { useLoad } from "../../hooks";
import type { AlertRule, Channel, Destination, Source } from "../../types";
import type { Names } from "./kinds";

/** Sources, destinations and channels, to name what a rule points at. */
export function useLookups() {
  const sources = useLoad(() => api.get<{ sources: Source[] }>("/sources"), []);
  const dests = useLoad(() => api.get<{ destinations: Destination[] }>("/destinations"), []);
  const channels = useLoad(() => api.get<{ channels: Channel[] }>("/notification-channels"), []);
  return {
    sources: sources.data?.sources,
    destinations: dests.data?.destinations,
    channels: channels.data?.channels,
    error: sources.error ?? dests.error ?? channels.error,
    ready: !!(sources.data && dests.data && channels.data),
    namesOf: (r: Pick<AlertRule, "source_id" | "destination_id">): Names => ({
      source: r.source_id ? (sources.data?.sources.find((s) => s.id === r.source_id)?.name ?? r.source_id) : null,
      destination: r.destination_id ? (dests.data?.destinations.find((d) => d.id === r.destination_id)?.name ?? r.destination_id) : null,
    }),
  };
}

export type Lookups = ReturnType<typeof useLookups>;

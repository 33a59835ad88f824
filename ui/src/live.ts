/** The live event stream (GET /v1/events/stream, Server-Sent Events) as a hook. */
import { useEffect, useRef, useState } from "react";
import { withQuery } from "./api";
import type { EventListItem } from "./types";

export interface StreamHandlers {
  /** A new event arrived. */
  created?: (e: EventListItem) => void;
  /** An event's status changed (delivered, failed, …). */
  updated?: (e: EventListItem) => void;
}

/** Subscribes while mounted; returns whether the stream is connected. The browser reconnects by itself. */
export function useEventStream(handlers: StreamHandlers, sourceId?: string): boolean {
  const [live, setLive] = useState(false);
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(() => {
    const es = new EventSource(withQuery("/v1/events/stream", { source_id: sourceId }));
    es.onopen = () => setLive(true);
    es.onerror = () => setLive(false);
    es.onmessage = (m) => ref.current.created?.(JSON.parse(m.data) as EventListItem);
    es.addEventListener("event.updated", (m) => ref.current.updated?.(JSON.parse((m as MessageEvent).data) as EventListItem));
    return () => {
      es.close();
      setLive(false);
    };
  }, [sourceId]);
  return live;
}

/** Calls fn at most once per `ms`, at the end of a burst (many events arriving at once → one reload). */
export function useDebounced(fn: () => void, ms: number) {
  const ref = useRef(fn);
  ref.current = fn;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return () => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      ref.current();
    }, ms);
  };
}

import type { Bus, BusMessage } from "../core/bus";

/** In-process fan-out: wakes workers and feeds SSE streams. Listeners must not throw into publishers. */
export function createBus(): Bus {
  const listeners = new Set<(m: BusMessage) => void>();
  return {
    publish(message) {
      for (const l of listeners) {
        try {
          l(message);
        } catch {}
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

import type { BackgroundContext } from "../runtime/background";
import type { BackgroundTask } from "../runtime/tasks";
import { wakeable } from "../runtime/wakeable";
import { buildAll } from "./builder";

export interface CatalogWorkOptions {
  /** Safety-net poll: picks up events no bus announced (stored by a CLI in local mode). */
  pollMs?: number;
  /** Wakes arrive once per stored event; a burst becomes one pass over bigger batches. */
  coalesceMs?: number;
}

/** When the newest events were left for a later pass (see builder.ts): how soon that pass comes. */
const HELD_BACK_RETRY_MS = 10;

/**
 * The collection builder beside HTTP: woken by the bus when an event is
 * stored on a source that has a collection, or when a collection is
 * created, rebuilt or deleted; never on the ingest path itself.
 */
export function startCatalogWork(ctx: BackgroundContext, opts: CatalogWorkOptions = {}): BackgroundTask[] {
  const { deps, logger } = ctx;
  let watched = new Set<string>();
  let retry: ReturnType<typeof setTimeout> | null = null;
  const builder = wakeable(
    "collection-builder",
    async () => {
      const pass = await buildAll(deps, logger);
      watched = pass.sources;
      if (pass.heldBack && !retry) {
        retry = setTimeout(() => {
          retry = null;
          builder.wake();
        }, HELD_BACK_RETRY_MS);
        retry.unref?.();
      }
      return pass.more;
    },
    { pollMs: opts.pollMs ?? 5000, logger, coalesceMs: opts.coalesceMs ?? 20 },
  );
  const unsubscribe = deps.bus.subscribe((m) => {
    if ((m.type === "event.created" && watched.has(m.sourceId)) || m.type === "collection.updated") builder.wake();
  });
  return [
    {
      name: builder.name,
      running: builder.running,
      async stop() {
        unsubscribe();
        if (retry) clearTimeout(retry);
        await builder.stop();
      },
    },
  ];
}

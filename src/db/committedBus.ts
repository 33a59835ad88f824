import type { Bus } from "../core/bus";
import type { Db } from "./db";
import { onCommit } from "./transaction";

/**
 * The bus domain code publishes on (deps.bus): a message sent inside a
 * transaction() of `db`'s store is delivered once that transaction commits,
 * and dropped if it (or the savepoint it was sent in) rolls back; outside a
 * transaction it is delivered at once. So a listener woken by a message
 * always finds the write it announces, and never one that was undone.
 */
export function publishAfterCommit(db: Db, bus: Bus): Bus {
  return {
    publish: (message) => onCommit(db, () => bus.publish(message)),
    subscribe: (listener) => bus.subscribe(listener),
  };
}

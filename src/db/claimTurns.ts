/**
 * What both dialects' claims share: how far a claim's walk over destinations
 * may go, and how the rows it found are handed out so destinations take turns.
 */

/**
 * A claim's walk over destinations visits at most this many per row asked
 * for (and at least WALK_MIN_VISITS): when most destinations with rows
 * waiting have none due yet (their retries are scheduled later), a claim
 * still costs in proportion to its batch, and the next one goes on from
 * where it stopped.
 */
export const WALK_VISITS_PER_ROW = 4;
export const WALK_MIN_VISITS = 64;

/** The walk's visit budget for a claim of `limit` rows. */
export const walkBudget = (limit: number) => Math.max(WALK_MIN_VISITS, limit * WALK_VISITS_PER_ROW);

/** Round-robin over the lists (one of each in turn), up to `limit` items. */
export function takeTurns<T>(lists: Iterable<T[]>, limit: number): T[] {
  const all = [...lists];
  const out: T[] = [];
  for (let turn = 0; out.length < limit; turn++) {
    let any = false;
    for (const list of all) {
      const item = list[turn];
      if (item === undefined) continue;
      any = true;
      out.push(item);
      if (out.length >= limit) break;
    }
    if (!any) break;
  }
  return out;
}

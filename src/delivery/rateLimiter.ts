/**
 * Per-destination pacing for `rate_limit_per_second`: sends start at least
 * 1/rate seconds apart, so no one-second window ever holds more than `rate`
 * sends (a token bucket with a burst would allow up to twice that).
 *
 * A destination may also belong to a group with a rate of its own (an
 * application's `rate_limit`, shared by all its endpoints): a send then needs
 * a slot of both, and takes neither when one is missing.
 *
 * Several nodes (docs/decisions.md D13): each node paces at rate / (live nodes), so the
 * cluster as a whole holds the rate (`shareAmong`, refreshed by the worker
 * every heartbeat interval, not per delivery).
 *
 * A delivery that finds no slot is handed back to the queue and its
 * destination (or every destination of its group seen so far) is left out of
 * claims until the next slot (`blocked`), so a slow destination never holds
 * worker slots while it waits.
 */
export interface PacingGroup {
  key: string;
  ratePerSecond: number | null;
}

export class DestinationPacer {
  /** Next free slot per destination id, and per group key. */
  private readonly nextSlot = new Map<string, number>();
  private readonly nextGroupSlot = new Map<string, number>();
  private readonly limited = new Set<string>();
  /** Destinations seen in each rate-limited group. */
  private readonly members = new Map<string, Set<string>>();
  /** The rate-limited group each destination was last seen in (`members` the other way round, for freeAt). */
  private readonly groupOf = new Map<string, string>();
  /** How many nodes share each rate: this node sends its 1/n part. */
  private nodes = 1;

  /** Paces at 1/n of every rate from now on (n: the live nodes of the cluster, at least 1). */
  shareAmong(n: number): void {
    this.nodes = Math.max(1, Math.floor(n));
  }

  /** Takes a send slot for the destination (and its group) now, or says it has none. */
  tryTake(destinationId: string, ratePerSecond: number | null, nowMs: number, group?: PacingGroup): boolean {
    const limitedGroup = group && group.ratePerSecond && group.ratePerSecond > 0 ? group : null;
    if (limitedGroup) {
      let members = this.members.get(limitedGroup.key);
      if (!members) this.members.set(limitedGroup.key, (members = new Set()));
      members.add(destinationId);
      this.groupOf.set(destinationId, limitedGroup.key);
    } else this.groupOf.delete(destinationId);
    const own = ratePerSecond && ratePerSecond > 0 ? ratePerSecond / this.nodes : null;
    const groupRate = limitedGroup ? limitedGroup.ratePerSecond! / this.nodes : 0;
    if (own) this.limited.add(destinationId);
    else this.limited.delete(destinationId);
    if (own && nowMs < (this.nextSlot.get(destinationId) ?? 0)) return false;
    if (limitedGroup && nowMs < (this.nextGroupSlot.get(limitedGroup.key) ?? 0)) return false;
    if (own) this.nextSlot.set(destinationId, nextSlotAfter(this.nextSlot.get(destinationId), nowMs, 1000 / own));
    if (limitedGroup) this.nextGroupSlot.set(limitedGroup.key, nextSlotAfter(this.nextGroupSlot.get(limitedGroup.key), nowMs, 1000 / groupRate));
    return true;
  }

  /** When the destination's next send may start: its own slot and its group's both free (at or before `nowMs` when it may send now). */
  freeAt(destinationId: string): number {
    const group = this.groupOf.get(destinationId);
    return Math.max(this.nextSlot.get(destinationId) ?? 0, group === undefined ? 0 : (this.nextGroupSlot.get(group) ?? 0));
  }

  /** Rate-limited destinations seen so far (alone or through their group): a claim takes one row of each, since a second could only be handed back. */
  rateLimited(): ReadonlySet<string> {
    if (this.members.size === 0) return this.limited;
    const all = new Set(this.limited);
    for (const members of this.members.values()) for (const id of members) all.add(id);
    return all;
  }

  /** Destinations without a slot at `nowMs`: the claim leaves their rows alone. */
  blocked(nowMs: number): string[] {
    const out: string[] = [];
    for (const [id, next] of this.nextSlot) {
      if (next > nowMs) out.push(id);
      else this.nextSlot.delete(id); // a past slot is the same as none; keeps the map small
    }
    for (const [key, next] of this.nextGroupSlot) {
      if (next > nowMs) out.push(...(this.members.get(key) ?? []));
      else this.nextGroupSlot.delete(key);
    }
    return out;
  }

  /** When the earliest blocked destination or group gets its next slot, or null when none is blocked. */
  nextUnblockAt(nowMs: number): number | null {
    let min: number | null = null;
    for (const next of [...this.nextSlot.values(), ...this.nextGroupSlot.values()]) if (next > nowMs && (min === null || next < min)) min = next;
    return min;
  }
}

/**
 * The slot after a send at `nowMs`. A send that comes a little after its slot
 * (the claim that brought its row took a moment) keeps the schedule: up to
 * half an interval of lateness is not carried into the next slot, so the rate
 * holds at the limit rather than drifting below it (measured 5-15% under
 * across two nodes); later than that (an idle destination), the schedule
 * starts again from now. Over any window, at most one send more than the
 * rate allows.
 */
function nextSlotAfter(slot: number | undefined, nowMs: number, intervalMs: number): number {
  const onSchedule = slot !== undefined && nowMs - slot <= intervalMs / 2;
  return (onSchedule ? Math.max(slot, nowMs - intervalMs) : nowMs) + intervalMs;
}

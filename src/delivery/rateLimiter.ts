/**
 * Per-destination pacing for `rate_limit_per_second`: sends start at least
 * 1/rate seconds apart, so no one-second window ever holds more than `rate`
 * sends (a token bucket with a burst would allow up to twice that).
 *
 * A delivery that finds no slot is handed back to the queue and its
 * destination is left out of claims until the next slot (`blocked`), so a
 * slow destination never holds worker slots while it waits.
 */
export class DestinationPacer {
  private readonly nextSlot = new Map<string, number>();
  private readonly limited = new Set<string>();

  /** Takes a send slot for the destination now, or says it has none. */
  tryTake(destinationId: string, ratePerSecond: number | null, nowMs: number): boolean {
    if (!ratePerSecond || ratePerSecond <= 0) {
      this.limited.delete(destinationId);
      return true;
    }
    this.limited.add(destinationId);
    const next = this.nextSlot.get(destinationId) ?? 0;
    if (nowMs < next) return false;
    this.nextSlot.set(destinationId, Math.max(nowMs, next) + 1000 / ratePerSecond);
    return true;
  }

  /** Rate-limited destinations seen so far: a claim takes one row of each, since a second could only be handed back. */
  rateLimited(): ReadonlySet<string> {
    return this.limited;
  }

  /** Destinations without a slot at `nowMs`: the claim leaves their rows alone. */
  blocked(nowMs: number): string[] {
    const out: string[] = [];
    for (const [id, next] of this.nextSlot) {
      if (next > nowMs) out.push(id);
      else this.nextSlot.delete(id); // a past slot is the same as none; keeps the map small
    }
    return out;
  }

  /** When the earliest blocked destination gets its next slot, or null when none is blocked. */
  nextUnblockAt(nowMs: number): number | null {
    let min: number | null = null;
    for (const next of this.nextSlot.values()) if (next > nowMs && (min === null || next < min)) min = next;
    return min;
  }
}

/**
 * Keeps loaded values for a short time: a worker sending thousands of
 * deliveries a second to one destination need not read and decrypt it for
 * each. Edits to destinations and connections apply within `ttlMs`.
 * Concurrent misses for one key share a single load.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: Promise<V> }>();
  constructor(
    private readonly ttlMs: number,
    private readonly load: (key: string) => Promise<V>,
    private readonly maxEntries = 10_000,
  ) {}

  /** The value, loaded again when the cached one is older than `ttlMs` or was loaded before `loadedSince` (a Date.now() time). */
  get(key: string, opts?: { loadedSince?: number }): Promise<V> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs && (opts?.loadedSince === undefined || hit.at >= opts.loadedSince)) return hit.value;
    const value = this.load(key);
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { at: now, value });
    // A failed load is not remembered.
    value.catch(() => this.entries.delete(key));
    return value;
  }

  /** Drops one entry: the next `get` loads it again. */
  forget(key: string) {
    this.entries.delete(key);
  }

  clear() {
    this.entries.clear();
  }
}

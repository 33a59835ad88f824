import type { Clock } from "../../domain/clock";
import { parseAddress } from "../../ingest/ipFilter";

export interface ThrottleRule {
  /** Failed logins allowed within the window; the next attempt waits. */
  failures: number;
  windowMs: number;
}

/**
 * One address may fail 10 times in 15 minutes; one account 30 times (from
 * any number of addresses). The account limit is the higher one so that a
 * single address cannot lock the admin out.
 */
export const LOGIN_LIMITS = {
  perAddress: { failures: 10, windowMs: 15 * 60_000 },
  perAccount: { failures: 30, windowMs: 15 * 60_000 },
} satisfies Record<string, ThrottleRule>;

/** Keys remembered per rule; past it the least recently failing key is forgotten, so memory stays bounded. */
const MAX_KEYS = 10_000;

/** Failure times per key in a sliding window. */
class FailureWindow {
  private readonly failures = new Map<string, number[]>();
  constructor(private readonly rule: ThrottleRule) {}

  /** Milliseconds until the key may try again; 0 when it may now. */
  waitMs(key: string, now: number): number {
    const times = this.recent(key, now);
    if (times.length < this.rule.failures) return 0;
    return times[times.length - this.rule.failures]! + this.rule.windowMs - now;
  }

  fail(key: string, now: number) {
    const times = this.recent(key, now);
    times.push(now);
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > MAX_KEYS) this.failures.delete(this.failures.keys().next().value!);
  }

  clear(key: string) {
    this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter((t) => t > now - this.rule.windowMs);
    if (times.length === 0) this.failures.delete(key);
    return times;
  }
}

export interface LoginThrottle {
  /** Seconds the caller must wait before this attempt may be checked; 0 when it may. */
  retryAfterSeconds(address: string | null, email: string): number;
  failed(address: string | null, email: string): void;
  /** Clears the account's failures; the address keeps its own (one good login must not buy more guesses elsewhere). */
  succeeded(email: string): void;
}

/** IPv6 clients usually hold a whole /64: count it as one address. */
function addressKey(address: string | null): string {
  const parsed = parseAddress(address);
  if (!parsed) return "unknown";
  if (parsed.kind() === "ipv6") return (parsed.toNormalizedString().split(":").slice(0, 4).join(":") + "::/64").toLowerCase();
  return parsed.toString();
}

const accountKey = (email: string) => email.trim().toLowerCase();

export function createLoginThrottle(clock: Clock, limits = LOGIN_LIMITS): LoginThrottle {
  const byAddress = new FailureWindow(limits.perAddress);
  const byAccount = new FailureWindow(limits.perAccount);
  const now = () => clock.now().getTime();
  return {
    retryAfterSeconds(address, email) {
      const t = now();
      const wait = Math.max(byAddress.waitMs(addressKey(address), t), byAccount.waitMs(accountKey(email), t));
      return wait > 0 ? Math.ceil(wait / 1000) : 0;
    },
    failed(address, email) {
      const t = now();
      byAddress.fail(addressKey(address), t);
      byAccount.fail(accountKey(email), t);
    },
    succeeded(email) {
      byAccount.clear(accountKey(email));
    },
  };
}

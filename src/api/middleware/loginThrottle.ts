import type { Clock } from "../../core/clock";
import { parseAddress } from "../../rules/ipFilter";

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

  /** Takes back one failure counted at `at` (an attempt that turned out not to fail). */
  unfail(key: string, at: number) {
    const times = this.failures.get(key);
    const i = times?.lastIndexOf(at) ?? -1;
    if (i < 0) return;
    times!.splice(i, 1);
    if (times!.length === 0) this.failures.delete(key);
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

/** An attempt counted as a failure before its password is checked; its outcome settles it. */
export interface LoginAttempt {
  /** The password was wrong: the attempt stays counted. */
  failed(): void;
  /** The password was right: the attempt is taken back from the address, and the account's failures are cleared (the address keeps its other ones: one good login must not buy more guesses elsewhere). */
  succeeded(): void;
  /** The check could not be made (the database failed): the attempt is taken back. */
  abandoned(): void;
}

export interface LoginThrottle {
  /**
   * Counts an attempt before its password is checked, so that attempts
   * arriving together (a burst of parallel guesses) are counted against
   * each other: at most the limit's number get a password check. Answers
   * the seconds to wait instead when the limit is reached. `unlockedAt` is
   * the account's last unlock as stored: a value this node has not seen
   * yet clears the account's failures (clocks play no part).
   */
  begin(address: string | null, email: string, unlockedAt?: string | null): { attempt: LoginAttempt } | { retryAfterSeconds: number };
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
  /** The last unlock seen per account (bounded like the failures). */
  const unlocks = new Map<string, string>();
  return {
    begin(address, email, unlockedAt) {
      const t = now();
      const a = addressKey(address);
      const u = accountKey(email);
      if (unlockedAt && unlocks.get(u) !== unlockedAt) {
        byAccount.clear(u);
        unlocks.delete(u);
        unlocks.set(u, unlockedAt);
        if (unlocks.size > MAX_KEYS) unlocks.delete(unlocks.keys().next().value!);
      }
      const wait = Math.max(byAddress.waitMs(a, t), byAccount.waitMs(u, t));
      if (wait > 0) return { retryAfterSeconds: Math.ceil(wait / 1000) };
      // Counted now, in the same turn as the check above: no other attempt can slip in between.
      byAddress.fail(a, t);
      byAccount.fail(u, t);
      let settled = false;
      const settle = (f: () => void) => () => {
        if (settled) return;
        settled = true;
        f();
      };
      return {
        attempt: {
          failed: settle(() => {}),
          succeeded: settle(() => {
            byAddress.unfail(a, t);
            byAccount.clear(u);
          }),
          abandoned: settle(() => {
            byAddress.unfail(a, t);
            byAccount.unfail(u, t);
          }),
        },
      };
    },
  };
}

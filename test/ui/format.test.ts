/**
 * The admin UI's time words for moments ahead: a queued retry's "in 59 min",
 * and a portal link's expiry, which may be days away ("in 7 d", not "in 10080 min").
 */
import { describe, expect, it } from "vitest";
import { timeAgo } from "../../ui/src/format";

describe("timeAgo, ahead of now", () => {
  const now = Date.parse("2026-01-01T12:00:00Z");
  const ahead = (seconds: number) => timeAgo(new Date(now + seconds * 1000).toISOString(), now);

  it("says seconds, minutes, hours or days", () => {
    expect(ahead(30)).toBe("in a few seconds");
    expect(ahead(59 * 60)).toBe("in 59 min");
    expect(ahead(3599)).toBe("in 60 min");
    expect(ahead(3600)).toBe("in 1 h");
    expect(ahead(23 * 3600)).toBe("in 23 h");
    expect(ahead(7 * 86400)).toBe("in 7 d");
  });

  it("still says how long ago for the past", () => {
    expect(timeAgo(new Date(now - 90_000).toISOString(), now)).toBe("1 min ago");
  });
});

import { describe, expect, it } from "vitest";
import { builderShare } from "../../src/catalog/background";

/**
 * How much of the time the collection builder takes while events arrive
 * (docs/performance.md, "With a collection attached"): little while the
 * collection is fresh, so a burst costs ingest almost nothing; more once it
 * has been behind for over 30 s, so a load that never eases cannot leave it
 * behind without end.
 */
describe("the collection builder's share of the time while events arrive", () => {
  it("is small while the collection is fresh or only briefly behind", () => {
    expect(builderShare(null)).toBe(0.02);
    expect(builderShare(0)).toBe(0.02);
    expect(builderShare(30_000)).toBe(0.02);
  });

  it("grows once the collection has been behind for longer than the freshness bound", () => {
    expect(builderShare(30_001)).toBe(0.25);
    expect(builderShare(10 * 60_000)).toBe(0.25);
  });

  it("keeps a larger fresh share a caller asked for", () => {
    expect(builderShare(null, 0.5)).toBe(0.5);
    expect(builderShare(60_000, 0.5)).toBe(0.5);
  });
});

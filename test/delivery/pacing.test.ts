import { describe, expect, it } from "vitest";
import { DestinationPacer } from "../../src/delivery/rateLimiter";

describe("DestinationPacer", () => {
  it("spaces sends 1/rate apart and blocks the destination until its next slot", () => {
    const p = new DestinationPacer();
    expect(p.tryTake("d", 4, 1000)).toBe(true);
    expect(p.tryTake("d", 4, 1100)).toBe(false);
    expect(p.blocked(1100)).toEqual(["d"]);
    expect(p.nextUnblockAt(1100)).toBe(1250);
    expect(p.tryTake("d", 4, 1250)).toBe(true);
    expect(p.tryTake("other", 4, 1250)).toBe(true);
    expect(p.tryTake("free", null, 1250)).toBe(true);
    expect(p.tryTake("free", null, 1250)).toBe(true);
    expect(p.blocked(5000)).toEqual([]);
  });

  it("keeps its schedule when a send comes a little late, and starts again from now after a pause", () => {
    const p = new DestinationPacer();
    expect(p.tryTake("d", 4, 1000)).toBe(true);
    // 50 ms after its slot (under half of 250 ms): the next slot stays at 1500, not 1550.
    expect(p.tryTake("d", 4, 1300)).toBe(true);
    expect(p.nextUnblockAt(1300)).toBe(1500);
    expect(p.tryTake("d", 4, 1500)).toBe(true);
    // Idle for a while: no burst to make up for it, the next slot is a whole interval on.
    expect(p.tryTake("d", 4, 5000)).toBe(true);
    expect(p.nextUnblockAt(5000)).toBe(5250);
    expect(p.tryTake("d", 4, 5100)).toBe(false);
  });

  it("says when a destination may send next: its own slot and its group's both free", () => {
    const p = new DestinationPacer();
    const group = { key: "application:a", ratePerSecond: 2 };
    expect(p.freeAt("d")).toBe(0);
    expect(p.tryTake("d", 4, 1000, group)).toBe(true);
    // Its own slot is 250 ms on, its group's 500 ms: the later one.
    expect(p.freeAt("d")).toBe(1500);
    expect(p.tryTake("e", null, 1500, group)).toBe(true);
    expect(p.freeAt("d")).toBe(2000);
    expect(p.freeAt("e")).toBe(2000);
    // Out of the group once it sends without one.
    expect(p.tryTake("e", null, 2000)).toBe(true);
    expect(p.freeAt("e")).toBe(0);
  });

  it("caps claims of a rate-limited destination at one row, and lifts the cap when its limit goes", () => {
    const p = new DestinationPacer();
    p.tryTake("limited", 4, 1000);
    p.tryTake("free", null, 1000);
    expect([...p.rateLimited()]).toEqual(["limited"]);
    p.tryTake("limited", null, 2000);
    expect([...p.rateLimited()]).toEqual([]);
  });

  it("with several live nodes sends its share: limit / nodes, for a destination and for an application's group", () => {
    const p = new DestinationPacer();
    p.shareAmong(2);
    const group = { key: "application:app_1", ratePerSecond: 5 };
    expect(p.tryTake("d", 4, 1000)).toBe(true);
    expect(p.nextUnblockAt(1000)).toBe(1500);
    expect(p.tryTake("e1", null, 1000, group)).toBe(true);
    expect(p.tryTake("e2", null, 1300, group)).toBe(false);
    expect(p.tryTake("e2", null, 1400, group)).toBe(true);
    p.shareAmong(1);
    expect(p.tryTake("d", 4, 1500)).toBe(true);
    expect(p.nextUnblockAt(1500)).toBe(1750);
  });
});

import { describe, expect, it } from "vitest";
import { hex32, newId } from "../../src/contracts/ids";

/**
 * Lists answer newest first by (created_at, id): rows created within the
 * same millisecond keep their creation order only if ids sort that way.
 */
describe("new ids", () => {
  it("sort in creation order, even many within one millisecond, with and without a prefix", () => {
    const plain = Array.from({ length: 2000 }, () => hex32());
    expect([...plain].sort()).toEqual(plain);
    const prefixed = Array.from({ length: 2000 }, () => newId("destination"));
    expect([...prefixed].sort()).toEqual(prefixed);
    expect(plain.every((id) => /^[0-9a-f]{32}$/.test(id))).toBe(true);
    expect(new Set(plain).size).toBe(plain.length);
  });
});

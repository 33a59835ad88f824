import { describe, expect, it } from "vitest";
import { dedupKey } from "../../src/ingest/dedup";
import { lazyJson } from "../../src/rules/json";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("dedupKey", () => {
  it("hashes the raw body, reads a header case-insensitively, or follows a dot path", () => {
    const body = bytes('{"data":{"id":"o-1","n":5,"list":[{"id":"x"}]}}');
    const json = lazyJson(body);
    expect(dedupKey("body_hash", null, {}, body, json)).toMatch(/^[0-9a-f]{64}$/);
    expect(dedupKey("body_hash", null, {}, bytes("a"), lazyJson(bytes("a")))).not.toBe(dedupKey("body_hash", null, {}, bytes("a "), lazyJson(bytes("a "))));
    expect(dedupKey("header", "X-GitHub-Delivery", { "x-github-delivery": "d1" }, body, json)).toBe("d1");
    expect(dedupKey("header", "X-GitHub-Delivery", {}, body, json)).toBeNull();
    expect(dedupKey("field", "data.id", {}, body, json)).toBe("o-1");
    expect(dedupKey("field", "data.n", {}, body, json)).toBe("5");
    expect(dedupKey("field", "data.list.0.id", {}, body, json)).toBe("x");
    expect(dedupKey("field", "data.missing", {}, body, json)).toBeNull();
    expect(dedupKey("field", "data.id", {}, bytes("not json"), lazyJson(bytes("not json")))).toBeNull();
    expect(dedupKey("header", "k", { k: "v".repeat(500) }, body, json)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

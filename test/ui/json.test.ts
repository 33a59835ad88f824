/**
 * The admin UI's JSON helpers: text checked as it is typed (schema and
 * payload editors) and the diff a record's changelog shows between
 * before_data and after_data.
 */
import { describe, expect, it } from "vitest";
import { checkJson, joinPath, jsonDiff, jsonEqual, parseData, shortJson } from "../../ui/src/json";

describe("checkJson", () => {
  it("accepts JSON, and empty text as nothing", () => {
    expect(checkJson('{"type": "object"}')).toEqual({ ok: true, empty: false, value: { type: "object" } });
    expect(checkJson("  \n")).toEqual({ ok: true, empty: true, value: undefined });
    expect(checkJson("[1, 2]")).toEqual({ ok: true, empty: false, value: [1, 2] });
  });

  it("says text that is not JSON is not, with the parser's reason", () => {
    const r = checkJson('{"type": "object",}');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/^Not valid JSON.*: \S/);
  });

  it("asks for an object where a schema is expected", () => {
    for (const text of ["[]", "42", "null", '"schema"']) expect(checkJson(text, { object: true })).toEqual({ ok: false, error: "Must be a JSON object: { … }" });
    expect(checkJson("{}", { object: true }).ok).toBe(true);
  });
});

describe("jsonDiff", () => {
  it("lists changed, added and removed paths down to the values that differ", () => {
    const before = { email: "jenny@example.com", name: "Jenny", address: { city: "Berlin", zip: "10115" }, tags: ["a", "b"], legacy: true };
    const after = { email: "new@example.com", name: "Jenny", address: { city: "Paris", zip: "10115", country: "FR" }, tags: ["a"] };
    expect(jsonDiff(before, after)).toEqual([
      { kind: "changed", path: "email", before: "jenny@example.com", after: "new@example.com" },
      { kind: "changed", path: "address.city", before: "Berlin", after: "Paris" },
      { kind: "added", path: "address.country", after: "FR" },
      { kind: "removed", path: "tags[1]", before: "b" },
      { kind: "removed", path: "legacy", before: true },
    ]);
  });

  it("finds nothing between equal values, whatever the key order", () => {
    expect(jsonDiff({ a: 1, b: { c: [1, { d: null }] } }, { b: { c: [1, { d: null }] }, a: 1 })).toEqual([]);
    expect(jsonEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
  });

  it("reports a change of type, or of the whole value, at its path", () => {
    expect(jsonDiff({ total: "42" }, { total: 42 })).toEqual([{ kind: "changed", path: "total", before: "42", after: 42 }]);
    expect(jsonDiff({ items: [] }, { items: {} })).toEqual([{ kind: "changed", path: "items", before: [], after: {} }]);
    expect(jsonDiff("draft", "paid")).toEqual([{ kind: "changed", path: "", before: "draft", after: "paid" }]);
    expect(jsonDiff({ a: 1 }, null)).toEqual([{ kind: "changed", path: "", before: { a: 1 }, after: null }]);
  });

  it("writes paths as they read in JavaScript, quoting keys that need it", () => {
    expect(joinPath("", "email")).toBe("email");
    expect(joinPath("items", 0)).toBe("items[0]");
    expect(joinPath("metadata", "order id")).toBe('metadata["order id"]');
    expect(jsonDiff({ m: { "x-y": 1 } }, { m: { "x-y": 2 } })[0]!.path).toBe('m["x-y"]');
  });

  it("treats a key named like an Object property as data", () => {
    expect(jsonDiff(JSON.parse('{"constructor": 1}'), JSON.parse('{"constructor": 2, "__proto__": 3}'))).toEqual([
      { kind: "changed", path: "constructor", before: 1, after: 2 },
      { kind: "added", path: "__proto__", after: 3 },
    ]);
  });
});

describe("shortJson and parseData", () => {
  it("cuts long values on one line", () => {
    expect(shortJson({ a: "x".repeat(100) }, 20)).toBe('{"a":"xxxxxxxxxxxxx…');
    expect(shortJson("ok")).toBe('"ok"');
  });

  it("parses the API's JSON strings; null is no data", () => {
    expect(parseData('{"a":1}')).toEqual({ a: 1 });
    expect(parseData("null")).toBeNull();
    expect(parseData(null)).toBeUndefined();
    expect(parseData("not json")).toBe("not json");
  });
});

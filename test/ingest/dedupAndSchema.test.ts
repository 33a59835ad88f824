import { describe, expect, it } from "vitest";
import { dedupKey } from "../../src/ingest/dedup";
import { lazyJson } from "../../src/rules/json";
import { compileSchema, InvalidSchemaError, schemaErrors } from "../../src/rules/schemaCheck";

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

describe("schema checks", () => {
  it("compiles a schema once and reuses it", () => {
    const text = JSON.stringify({ type: "object", required: ["a"] });
    expect(compileSchema(text)).toBe(compileSchema(text));
  });

  it("refuses invalid schemas", () => {
    for (const bad of ['{"type":"nope"}', '{"required":"a"}', "[]", "{", '{"$ref":"http://example.com/remote.json"}']) {
      expect(() => compileSchema(bad), bad).toThrow(InvalidSchemaError);
    }
  });

  it("lists violations with JSON pointers; non-JSON is one violation", () => {
    const validate = compileSchema(JSON.stringify({ type: "object", properties: { n: { type: "integer" }, email: { type: "string", format: "email" } } }));
    const ok = bytes('{"n":1,"email":"a@b.co"}');
    expect(schemaErrors(validate, ok, lazyJson(ok))).toBeNull();
    const bad = bytes('{"n":"x","email":"nope"}');
    expect(schemaErrors(validate, bad, lazyJson(bad))!.map((e) => e.path).sort()).toEqual(["/email", "/n"]);
    const notJson = bytes("{");
    expect(schemaErrors(validate, notJson, lazyJson(notJson))).toEqual([{ path: "", message: "body is not valid JSON" }]);
    const binary = new Uint8Array([0xff]);
    expect(schemaErrors(validate, binary, lazyJson(binary))).toEqual([{ path: "", message: "body is not valid UTF-8 JSON" }]);
  });

  it("keeps two schemas with the same $id apart", () => {
    const a = compileSchema(JSON.stringify({ $id: "https://x/s.json", type: "string" }));
    const b = compileSchema(JSON.stringify({ $id: "https://x/s.json", type: "number" }));
    expect(a("s")).toBe(true);
    expect(b("s")).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { lazyJson } from "../../src/rules/json";
import { compileSchema, InvalidSchemaError, schemaErrors } from "../../src/rules/schemaCheck";

const bytes = (s: string) => new TextEncoder().encode(s);

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

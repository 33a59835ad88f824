import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { relayFile, resolveSecretRefs, secretRefName } from "../../src/contracts/relayFile";
import { parseRelayText, renderRelayFile } from "../../src/domain/configText";
import { RELAY_SCHEMA_PATH, renderRelaySchema } from "../../scripts/relay-schema";

/** The relay file's contract, its committed JSON Schema and its text form (docs/config-as-code.md). */

const FILE = `version: 1
sources:
  - slug: github
    name: GitHub
    template: github
    verification_secret: \${SOURCE_GITHUB_SECRET}
destinations:
  - name: api
    url: https://api.example.com/hooks
    signing_secret: \${DESTINATION_API_SIGNING_SECRET}
connections:
  - name: github-to-api
    source: github
    destination: api
    filter_rules:
      - { field: body.action, operator: eq, value: opened }
`;

describe("docs/hookrelay.schema.json", () => {
  it("is the one generated from the contract (run `bun scripts/relay-schema.ts` after changing it)", () => {
    expect(readFileSync(RELAY_SCHEMA_PATH, "utf8")).toBe(renderRelaySchema());
  });

  it("accepts a file as written, references included, and names a misspelt field", () => {
    const validate = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(RELAY_SCHEMA_PATH, "utf8")));
    expect(validate(parseRelayText(FILE)), JSON.stringify(validate.errors)).toBe(true);
    const typo = parseRelayText(FILE.replace("template: github", "templat: github"));
    expect(validate(typo)).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ instancePath: "/sources/0", keyword: "additionalProperties" });
  });
});

describe("the text form", () => {
  it("writes keys sorted and reads back what it wrote, in YAML and in JSON", () => {
    const resolved = resolveSecretRefs(parseRelayText(FILE), () => "whsec_" + Buffer.alloc(32, 1).toString("base64"));
    const doc = relayFile.parse(resolved.file);
    for (const format of ["yaml", "json"] as const) {
      const text = renderRelayFile(doc, format);
      expect(parseRelayText(text)).toEqual(JSON.parse(JSON.stringify(doc)));
      expect(renderRelayFile(relayFile.parse(parseRelayText(text)), format)).toBe(text);
    }
    expect(renderRelayFile(doc, "yaml").split("\n")[0]).toBe("alert_rules: []");
  });

  it("names a syntax error by line and column, and refuses duplicate keys", () => {
    const problem = (text: string) => {
      try {
        parseRelayText(text);
      } catch (err) {
        return (err as { details: { field: string }[] }).details[0]!.field;
      }
      throw new Error("parsed");
    };
    expect(problem("version: 1\nsources: [\n")).toMatch(/^line \d+, column \d+$/);
    expect(problem("version: 1\nversion: 1\n")).toBe("line 2, column 1");
  });

  it("bounds aliases, so a small file cannot expand into a large document", () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(", ")}]`)].join("\n");
    expect(() => parseRelayText(bomb)).toThrow();
  });
});

describe("secret references", () => {
  it("are named stably from the resource and the field", () => {
    expect(secretRefName("sources", "github", ["verification_secret"])).toBe("SOURCE_GITHUB_SECRET");
    expect(secretRefName("destinations", "billing api", ["auth_config", "password"])).toBe("DESTINATION_BILLING_API_AUTH_PASSWORD");
    expect(secretRefName("destinations", "api", ["headers", "X-Api-Key"])).toBe("DESTINATION_API_HEADER_X_API_KEY");
  });

  it("resolve from the environment or a file, and each missing one is named by its place", () => {
    const raw = parseRelayText(FILE.replace("${DESTINATION_API_SIGNING_SECRET}", "file:/nonexistent/secret"));
    const { problems } = resolveSecretRefs(raw, (ref) => (ref.kind === "env" && ref.name === "SOURCE_GITHUB_SECRET" ? "s3cret-value-1234" : undefined));
    expect(problems).toEqual([{ field: "destinations[0].signing_secret", message: "secret reference: file /nonexistent/secret cannot be read (or is not a regular file of at most 64 KiB)" }]);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The admin UI's one stylesheet: a rule left open swallows every rule after
 * it without an error anywhere (a merge once left one open, and the portal's
 * header lost its layout). Every block must close where it should.
 */
describe("ui/src/styles.css", () => {
  it("closes every block it opens, and opens no rule inside another's declarations", () => {
    const css = readFileSync(join(import.meta.dirname, "../../ui/src/styles.css"), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    let depth = 0;
    const problems: string[] = [];
    css.split("\n").forEach((line, i) => {
      for (const ch of line) {
        if (ch === "{") depth++;
        if (ch === "}") depth--;
        if (depth < 0) problems.push(`line ${i + 1}: a } closes nothing`);
      }
      // A selector line ending in { at rule depth > 1 outside @media/@supports blocks is a rule opened in a rule.
      if (/^\S.*\{\s*$/.test(line) && depth > 1) problems.push(`line ${i + 1}: opened inside an unclosed block`);
    });
    expect(problems).toEqual([]);
    expect(depth).toBe(0);
  });
});

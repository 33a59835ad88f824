/**
 * The admin UI's wording of validation errors: zod's messages and the API's
 * field paths (`ip_allowlist.1`, `filter_rules.0.value`, `headers.bad header`)
 * turned into words next to the right form field.
 */
import { describe, expect, it } from "vitest";
import { issueLine, nestedMessage, placeIssue, readableMessage } from "../../ui/src/issues";

describe("readableMessage", () => {
  it("rephrases zod's default messages", () => {
    expect(readableMessage("Too small: expected string to have >=1 characters")).toBe("Required");
    expect(readableMessage("Too big: expected string to have <=200 characters")).toBe("Must be at most 200 characters");
    expect(readableMessage("Too small: expected number to be >=100")).toBe("Must be at least 100");
    expect(readableMessage("Too big: expected number to be <=50")).toBe("Must be at most 50");
    expect(readableMessage("Too small: expected number to be >0")).toBe("Must be more than 0");
    expect(readableMessage('Invalid option: expected one of "*"|"read"')).toBe("Must be * or read");
    expect(readableMessage('Invalid option: expected one of "hex"|"base64"|"latin1"')).toBe("Must be hex, base64 or latin1");
    expect(readableMessage("Invalid input: expected string, received number")).toBe("Must be text");
    expect(readableMessage("Invalid input: expected array, received string")).toBe("Must be a list");
    expect(readableMessage("Invalid input: expected number, received undefined")).toBe("Required");
    expect(readableMessage('Unrecognized keys: "colour", "size"')).toBe("Not a known setting: colour, size");
  });

  it("keeps the API's own messages, capitalised, and says a repeated prefix once", () => {
    expect(readableMessage("must use http:// or https://")).toBe("Must use http:// or https://");
    expect(readableMessage("invalid regular expression: Invalid regular expression: missing )")).toBe("Invalid regular expression: missing )");
  });
});

describe("placeIssue", () => {
  it("picks the longest known field the path is in, with the rest of the path", () => {
    const known = ["name", "filter_rules", "filter_rules.0.value", "ip_allowlist"];
    expect(placeIssue("name", known)).toEqual({ field: "name", rest: [] });
    expect(placeIssue("filter_rules.0.value", known)).toEqual({ field: "filter_rules.0.value", rest: [] });
    expect(placeIssue("filter_rules.3.field", known)).toEqual({ field: "filter_rules", rest: ["3", "field"] });
    expect(placeIssue("ip_allowlist.1", known)).toEqual({ field: "ip_allowlist", rest: ["1"] });
    expect(placeIssue("names", known)).toBeNull();
  });
});

describe("nestedMessage and issueLine", () => {
  it("say where inside a field only when the message does not name the value already", () => {
    expect(nestedMessage(["1"], '"nonsense" is not an IPv4/IPv6 address or CIDR')).toBe('"nonsense" is not an IPv4/IPv6 address or CIDR');
    expect(nestedMessage(["2"], "Too small: expected number to be >=1")).toBe("Item 3: must be at least 1");
    expect(nestedMessage(["encoding"], 'Invalid option: expected one of "hex"|"base64"')).toBe("Encoding: must be hex or base64");
    expect(nestedMessage(["bad header"], "Invalid key in record")).toBe("“bad header” is not an allowed name");
  });

  it("names a field no form shows in words, never as a dotted path", () => {
    expect(issueLine({ field: "ip_allowlist.1", message: "Too small: expected string to have >=1 characters" })).toBe("ip allowlist, item 2: required");
    expect(issueLine({ field: "rate_limit", message: "Too big: expected number to be <=100" })).toBe("rate limit: Must be at most 100");
    expect(issueLine({ field: "", message: "give destination_id, connection_id or both" })).toBe("Give destination_id, connection_id or both");
  });
});

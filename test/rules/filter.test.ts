import { describe, expect, it } from "vitest";
import { AppError } from "../../src/contracts/errors";
import { eventView } from "../../src/rules/eventView";
import { FilterLimitError, matchesFilter, parseFilterRules, type FilterRequest } from "../../src/rules/filter";

const request: FilterRequest = {
  body: {
    type: "order.created",
    amount: 1500,
    currency: "EUR",
    paid: true,
    note: null,
    tags: ["vip", "eu"],
    customer: { id: "cus_1", email: "Ann@Example.com", address: { country: "DE" } },
    items: [{ sku: "a-1", qty: 2 }, { sku: "b-2", qty: 1 }],
    created: "2026-03-01T10:00:00Z",
  },
  headers: { "x-github-event": "push", "x-count": "42", "content-type": "application/json" },
  query: { env: "prod", "a.b": "dotted" },
  method: "POST",
  path: "/hooks/orders",
};

/** Parses rules as a connection save would, then matches them against the request. */
const match = (rules: unknown, req: FilterRequest = request) => matchesFilter(parseFilterRules(rules), req);
const one = (field: string, operator: string, value?: unknown) => match([value === undefined ? { field, operator } : { field, operator, value }]);

function problems(rules: unknown): { field: string; message: string }[] {
  try {
    parseFilterRules(rules);
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("validation_error");
    expect((e as AppError).status).toBe(400);
    return (e as AppError).details as { field: string; message: string }[];
  }
  throw new Error("expected the rules to be refused");
}

describe("matchesFilter: field roots", () => {
  it("reads dot paths into the body, array indexes included", async () => {
    expect(await one("body.type", "eq", "order.created")).toBe(true);
    expect(await one("body.customer.address.country", "eq", "DE")).toBe(true);
    expect(await one("body.items.1.sku", "eq", "b-2")).toBe(true);
    expect(await one("body.items[0].qty", "eq", 2)).toBe(true);
    expect(await one("body.items.5.sku", "exists")).toBe(false);
    expect(await one("body.type.deeper", "exists")).toBe(false);
    expect(await one("body", "contains", "x")).toBe(false);
  });

  it("reads headers by lower-case name whatever case the rule uses", async () => {
    expect(await one("headers.X-GitHub-Event", "eq", "push")).toBe(true);
    expect(await one("headers.x-github-event", "eq", "push")).toBe(true);
    expect(await one("headers.x-missing", "exists", false)).toBe(true);
  });

  it("reads query parameters (names are whole keys, dots and all), method and path", async () => {
    expect(await one("query.env", "eq", "prod")).toBe(true);
    expect(await one("query.a.b", "eq", "dotted")).toBe(true);
    expect(await one("method", "eq", "post")).toBe(true);
    expect(await one("method", "in", ["get", "POST"])).toBe(true);
    expect(await one("path", "regex", "^/hooks/")).toBe(true);
  });

  it("matches a whole string body with contains", async () => {
    expect(await match([{ field: "body", operator: "contains", value: "ping" }], { ...request, body: "ping=1" })).toBe(true);
  });
});

describe("matchesFilter: operators", () => {
  it("eq / neq compare JSON values, and strings equal numbers and booleans with the same text", async () => {
    expect(await one("body.amount", "eq", 1500)).toBe(true);
    expect(await one("body.amount", "eq", "1500")).toBe(true);
    expect(await one("headers.x-count", "eq", 42)).toBe(true);
    expect(await one("body.paid", "eq", true)).toBe(true);
    expect(await one("body.note", "eq", null)).toBe(true);
    expect(await one("body.tags", "eq", ["vip", "eu"])).toBe(true);
    expect(await one("body.customer.address", "eq", { country: "DE" })).toBe(true);
    expect(await one("body.amount", "eq", 1501)).toBe(false);
    expect(await one("body.missing", "eq", null)).toBe(false);
    expect(await one("body.currency", "neq", "USD")).toBe(true);
    expect(await one("body.currency", "neq", "EUR")).toBe(false);
    expect(await one("body.missing", "neq", "x")).toBe(true);
  });

  it("gt / gte / lt / lte compare numbers (numeric text included) and otherwise text, so ISO dates order", async () => {
    expect(await one("body.amount", "gt", 1000)).toBe(true);
    expect(await one("body.amount", "gte", 1500)).toBe(true);
    expect(await one("body.amount", "lt", 1500)).toBe(false);
    expect(await one("body.amount", "lte", "1500")).toBe(true);
    expect(await one("headers.x-count", "gt", 9)).toBe(true);
    expect(await one("body.created", "gte", "2026-01-01")).toBe(true);
    expect(await one("body.created", "lt", "2026-01-01")).toBe(false);
    expect(await one("body.missing", "lt", 5)).toBe(false);
    expect(await one("body.paid", "gt", 0)).toBe(false);
    expect(await one("body.currency", "gt", 5)).toBe(false);
  });

  it("contains finds substrings and array members", async () => {
    expect(await one("body.customer.email", "contains", "Example")).toBe(true);
    expect(await one("body.customer.email", "contains", "example")).toBe(false);
    expect(await one("body.tags", "contains", "vip")).toBe(true);
    expect(await one("body.tags", "contains", "us")).toBe(false);
    expect(await one("body.customer", "contains", "id")).toBe(false);
    expect(await one("body.missing", "contains", "x")).toBe(false);
  });

  it("in admits any listed value", async () => {
    expect(await one("body.currency", "in", ["USD", "EUR"])).toBe(true);
    expect(await one("body.amount", "in", [1, "1500"])).toBe(true);
    expect(await one("body.currency", "in", ["USD"])).toBe(false);
    expect(await one("body.missing", "in", ["x", null])).toBe(false);
  });

  it("exists is true by default, false asks for absence; null counts as present", async () => {
    expect(await one("body.customer.id", "exists")).toBe(true);
    expect(await one("body.customer.id", "exists", false)).toBe(false);
    expect(await one("body.note", "exists")).toBe(true);
    expect(await one("body.nope", "exists", false)).toBe(true);
  });

  it("regex tests text, numbers and booleans; a leading (?i) makes it case-insensitive", async () => {
    expect(await one("body.type", "regex", "^order\\.")).toBe(true);
    expect(await one("body.customer.email", "regex", "(?i)ann@")).toBe(true);
    expect(await one("path", "regex", "/hooks/orders")).toBe(true);
    expect(await one("body.customer.email", "regex", "ann@")).toBe(false);
    expect(await one("body.amount", "regex", "^15")).toBe(true);
    expect(await one("body.customer", "regex", ".*")).toBe(false);
    expect(await one("body.missing", "regex", ".*")).toBe(false);
  });

  it("stops a catastrophically backtracking regex at its deadline instead of holding the thread", async () => {
    const text = "a".repeat(40) + "!";
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = Date.now();
    const outcome = await match([{ field: "body.text", operator: "regex", value: "^(a+)+$" }], { ...request, body: { text } }).catch((e: unknown) => e);
    clearInterval(timer);
    expect(outcome).toBeInstanceOf(FilterLimitError);
    expect((outcome as Error).message).toMatch(/ran longer than 250 ms/);
    // This thread kept running meanwhile (the regex ran in the sandbox), and the answer came at the deadline, not when the regex gave up.
    expect(ticks).toBeGreaterThan(5);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The sandbox replaced the terminated worker: the next check works.
    expect(await one("body.type", "regex", "^order\\.")).toBe(true);
  });

  it("needs every rule to match; no rules (or null) match everything", async () => {
    expect(await match([{ field: "body.type", operator: "eq", value: "order.created" }, { field: "headers.x-github-event", operator: "eq", value: "push" }])).toBe(true);
    expect(await match([{ field: "body.type", operator: "eq", value: "order.created" }, { field: "headers.x-github-event", operator: "eq", value: "pull" }])).toBe(false);
    expect(await match([])).toBe(true);
    expect(await match(null)).toBe(true);
    expect(await match(undefined)).toBe(true);
  });

  it("accepts the stored JSON text form", async () => {
    expect(await match('[{"field":"body.currency","operator":"eq","value":"EUR"}]')).toBe(true);
  });

  it("copes with bodies that are not objects", async () => {
    for (const body of [null, "text", 5, [1, 2]]) {
      expect(await match([{ field: "body.type", operator: "exists" }], { ...request, body })).toBe(false);
    }
    expect(await match([{ field: "body.0", operator: "eq", value: 1 }], { ...request, body: [1, 2] })).toBe(true);
  });
});

describe("parseFilterRules: invalid rules are a 400 validation_error listing the bad parts", () => {
  it("refuses unknown operators, bad roots and non-string fields", () => {
    expect(problems([{ field: "body.x", operator: "like", value: "a" }]).map((d) => d.field)).toEqual(["filter_rules.0.operator"]);
    for (const field of ["bodyx", "header.x", "headers.", "headers", "query", "cookies.a", "body..a", "", "method.x"]) {
      expect(problems([{ field, operator: "exists" }]).map((d) => d.field)).toContain("filter_rules.0.field");
    }
    expect(problems([{ field: 5, operator: "exists" }]).map((d) => d.field)).toContain("filter_rules.0.field");
  });

  it("refuses missing or ill-typed values per operator and bad regexes", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ operator: "eq" }, /required/],
      [{ operator: "neq" }, /required/],
      [{ operator: "gt" }, /number/],
      [{ operator: "lt", value: {} }, /number/],
      [{ operator: "gte", value: "" }, /number/],
      [{ operator: "contains" }, /contains/],
      [{ operator: "contains", value: [1] }, /contains/],
      [{ operator: "in", value: "a" }, /array/],
      [{ operator: "in", value: [] }, /array/],
      [{ operator: "in", value: [{ a: 1 }] }, /array/],
      [{ operator: "exists", value: "yes" }, /true or false/],
      [{ operator: "regex" }, /regular expression/],
      [{ operator: "regex", value: "(unclosed" }, /invalid regular expression/],
      [{ operator: "regex", value: "a{2,1}" }, /invalid regular expression/],
      [{ operator: "regex", value: "(?x)a" }, /invalid regular expression/],
    ];
    for (const [rule, message] of cases) {
      const details = problems([{ field: "body.x", ...rule }]);
      expect(details.map((d) => d.field)).toEqual(["filter_rules.0.value"]);
      expect(details[0]!.message).toMatch(message);
    }
  });

  it("refuses a non-array, non-object items, malformed JSON text and too many rules", () => {
    for (const bad of [{ field: "body.x", operator: "exists" }, "not json", 5, [5], [null]]) {
      expect(problems(bad).length).toBeGreaterThan(0);
    }
    const many = Array.from({ length: 101 }, () => ({ field: "method", operator: "exists" }));
    expect(problems(many).length).toBeGreaterThan(0);
  });

  it("names the rule's position and honours a field prefix", () => {
    const details = (() => {
      try {
        parseFilterRules([{ field: "method", operator: "exists" }, { field: "body.a", operator: "nope" }], "body.filter_rules");
      } catch (e) {
        return (e as AppError).details as { field: string }[];
      }
      return [];
    })();
    expect(details.map((d) => d.field)).toEqual(["body.filter_rules.1.operator"]);
  });

  it("normalizes what it keeps: header names lower-case, brackets to dots, method values upper-case", () => {
    expect(
      parseFilterRules([
        { field: "headers.X-Event", operator: "eq", value: "A" },
        { field: "body.items[2].id", operator: "exists" },
        { field: "method", operator: "in", value: ["post", "put"] },
      ]),
    ).toEqual([
      { field: "headers.x-event", operator: "eq", value: "A" },
      { field: "body.items.2.id", operator: "exists" },
      { field: "method", operator: "in", value: ["POST", "PUT"] },
    ]);
  });
});

describe("eventView: a stored event as filters and transforms see it", () => {
  const base = { headers: '{"X-Event":"push","x-multi":["a","b"]}', query: null, method: "post", path: "/p", contentType: "application/json" };

  it("parses JSON bodies, lower-cases header names and upper-cases the method", () => {
    const v = eventView({ ...base, body: Buffer.from('{"a":{"b":1}}') });
    expect(v).toEqual({ body: { a: { b: 1 } }, headers: { "x-event": "push", "x-multi": "a, b" }, query: {}, method: "POST", path: "/p" });
  });

  it("parses form bodies into fields and keeps other text as a string", () => {
    expect(eventView({ ...base, contentType: "application/x-www-form-urlencoded", body: Buffer.from("From=%2B123&Body=hi") }).body).toEqual({ From: "+123", Body: "hi" });
    expect(eventView({ ...base, contentType: "text/plain", body: Buffer.from("hello") }).body).toBe("hello");
    expect(eventView({ ...base, body: new Uint8Array() }).body).toBeNull();
  });

  it("reads the query from JSON text or a raw query string", () => {
    expect(eventView({ ...base, body: Buffer.from("{}"), query: '{"a":"1"}' }).query).toEqual({ a: "1" });
    expect(eventView({ ...base, body: Buffer.from("{}"), query: "?a=1&b=two" }).query).toEqual({ a: "1", b: "two" });
    expect(eventView({ ...base, body: Buffer.from("{}"), query: "a=1" }).query).toEqual({ a: "1" });
  });
});

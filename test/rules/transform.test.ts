import { describe, expect, it } from "vitest";
import { AppError } from "../../src/contracts/errors";
import { applyTransform, compileTransform, TransformError, type TransformInput } from "../../src/rules/transform";

const input: TransformInput = {
  body: { type: "order.created", data: { id: "o_1", items: [{ sku: "a", qty: 2, price: 5 }, { sku: "b", qty: 1, price: 10 }] } },
  headers: { "x-github-event": "push", "content-type": "application/json" },
  query: { env: "prod" },
  method: "POST",
};
const run = (expression: string, timeoutMs = 1000) => applyTransform(expression, input, { timeoutMs });
/** Results as they go over the wire. */
const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

async function failure(p: Promise<unknown>): Promise<TransformError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TransformError);
    return e as TransformError;
  }
  throw new Error("expected the transform to fail");
}

describe("applyTransform", () => {
  it("gets the parsed body as input and $headers, $query, $method bound", async () => {
    const out = await run(`{
      "event": type,
      "order": data.id,
      "total": $sum(data.items.(qty * price)),
      "skus": data.items.sku,
      "gh": $headers."x-github-event",
      "env": $query.env,
      "method": $method
    }`);
    expect(json(out)).toEqual({ event: "order.created", order: "o_1", total: 20, skus: ["a", "b"], gh: "push", env: "prod", method: "POST" });
  });

  it("returns null when the expression selects nothing, and plain values as they are", async () => {
    expect(await run("nothing.here")).toBeNull();
    expect(await run('"text"')).toBe("text");
    expect(await run("$count(data.items)")).toBe(2);
  });

  it("works on array and string bodies", async () => {
    expect(json(await applyTransform("$[0]", { ...input, body: [{ a: 1 }, { a: 2 }] }, { timeoutMs: 1000 }))).toEqual({ a: 1 });
    expect(await applyTransform("$uppercase($)", { ...input, body: "hi" }, { timeoutMs: 1000 })).toBe("HI");
  });

  it("stops an infinite tail recursion at the time limit with a clear error", async () => {
    const started = Date.now();
    const e = await failure(run("($loop := function($n) { $loop($n + 1) }; $loop(0))", 200));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(e.timedOut).toBe(true);
    expect(e.code).toBe("transform_error");
    expect(e.jsonataCode).toBe("D1012");
    expect(e.limit).toBe("time");
    expect(e.message).toMatch(/ran longer than the 200 ms time limit/);
  });

  it("stops runaway non-tail recursion and huge sequences quickly", async () => {
    const deep = await failure(run("($f := function($n) { 1 + $f($n + 1) }; $f(0))"));
    expect(deep.jsonataCode).toBe("D1011");
    expect(deep.timedOut).toBe(false);
    const huge = await failure(run("$count([1..9000000])"));
    expect(huge.jsonataCode).toBe("D2015");
    expect(huge.limit).toBe("memory");
    // The limit, not the length asked for, is "the maximum".
    expect(huge.message).toMatch(/maximum sequence length of 1,000,000 was exceeded, the expression asked for 9000000/);
    const appended = await failure(run("$append([1..600000], [1..600000])"));
    expect(appended.message).toMatch(/maximum sequence length of 1,000,000 was exceeded, the expression asked for 1200000/);
  });

  it("stops built-in calls that would build a huge string before they build it", async () => {
    const started = Date.now();
    const pad = await failure(run('$length($pad("", 100000000, "a"))'));
    expect(pad.limit).toBe("memory");
    expect(pad.message).toMatch(/\$pad's result would be 100000000 characters long, over the 10000000 limit/);
    const doubling = await failure(run('($f := function($s, $n) { $n = 0 ? $s : $f($s & $s, $n - 1) }; $length($f("xxxxxxxx", 30)))'));
    expect(doubling.limit).toBe("memory");
    expect(doubling.message).toMatch(/a string joined with & would be \d+ characters long/);
    const join = await failure(run('$join([1..20].$pad("", 1000000, "x"))'));
    expect(join.message).toMatch(/\$join's result would be 20000000 characters/);
    const str = await failure(run('($a := $pad("", 5000000, "x"); $string([$a, $a, $a]))'));
    expect(str.message).toMatch(/\$string's result would be more than 10000000 characters of JSON/);
    const result = await failure(run('($a := $pad("", 5000000, "x"); [$a, $a, $a])'));
    expect(result.message).toMatch(/the result would be more than 10000000 characters of JSON/);
    // Refused before anything was built: no deadline was needed.
    expect(Date.now() - started).toBeLessThan(20_000);
    // & and the wrapped built-ins still behave as JSONata's own.
    expect(await run('"a" & 1 & {"k": true} & nothing & $pad("b", -3, "-") & $join(["x", "y"], ",") & $string([1])')).toBe('a1{"k":true}--bx,y[1]');
  });

  it("ends a single long built-in call (a backtracking regex) at the deadline, and the next transform runs", async () => {
    const body = { s: "a".repeat(100_000) };
    const e = await failure(applyTransform("$contains(s, /(a*)*b/) or $contains(s, /(a*)*c/) or $contains(s, /(a*)*d/)", { ...input, body }, { timeoutMs: 50 }));
    expect(e.limit).toBe("time");
    expect(e.message).toMatch(/ran longer than the 50 ms time limit/);
    expect(await run("data.id")).toBe("o_1");
  });

  it("stops a long loop at the time limit and lets other work run meanwhile", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const e = await failure(run("$reduce([1..900000], function($a, $b) { $a + $b })", 300));
    clearInterval(timer);
    expect(e.timedOut).toBe(true);
    // The event loop was handed back during evaluation: timers kept firing.
    expect(ticks).toBeGreaterThan(5);
  });

  it("reports evaluation errors with JSONata's code and message", async () => {
    const e = await failure(run("$notAFunction(1)"));
    expect(e.jsonataCode).toBe("T1006");
    expect(e.message).toMatch(/non-function/);
    expect(typeof e.position).toBe("number");
    const syntax = await failure(run("{ a: "));
    expect(syntax.message).toMatch(/Invalid JSONata expression/);
  });

  it("evaluates concurrently with separate bindings", async () => {
    const results = await Promise.all(
      ["GET", "POST", "PUT", "DELETE"].map((method) => applyTransform("$method & ':' & data.id", { ...input, method }, { timeoutMs: 1000 })),
    );
    expect(results).toEqual(["GET:o_1", "POST:o_1", "PUT:o_1", "DELETE:o_1"]);
  });
});

describe("compileTransform", () => {
  it("caches compiled expressions per expression and time limit", () => {
    expect(compileTransform("a.b")).toBe(compileTransform("a.b"));
    expect(compileTransform("a.b", 50)).not.toBe(compileTransform("a.b", 60));
  });

  it("throws validation_error (400) with message, position and token for syntax errors", () => {
    for (const bad of ["{ a: ", "a.b[", "1 +", "(1 + )", "\"open", "  "]) {
      let err: unknown;
      try {
        compileTransform(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("validation_error");
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).message).toMatch(/^Invalid JSONata expression/);
      expect(((err as AppError).details as { field: string }[])[0]!.field).toBe("transform_expression");
    }
  });
});

/**
 * What the sandbox costs a transform (docs/performance.md): the same
 * evaluation in this thread (as before the sandbox) and through the
 * sandbox's workers (a message round trip each way), one at a time and 32
 * at once (the delivery worker's default concurrency). Run: bun scripts/bench-transform.ts
 */
import { applyTransform, evaluateInSandbox, type TransformInput } from "../src/rules/transform";
import { matchesFilter, parseFilterRules } from "../src/rules/filter";
import { sandbox } from "../src/rules/sandbox";

const expression = '{"id": data.id, "total": $sum(data.items.(qty * price)), "skus": data.items.sku, "event": $headers."x-event"}';
const items = Array.from({ length: 20 }, (_, i) => ({ sku: `sku-${i}`, qty: i % 3, price: 10 + i, note: "x".repeat(40) }));
const input: TransformInput = { body: { type: "order.created", data: { id: "o_1", items } }, headers: { "x-event": "order" }, query: {}, method: "POST" };
const N = Number(process.env.N ?? 5000);

async function measure(name: string, run: () => Promise<unknown>, parallel = 1) {
  for (let i = 0; i < 200; i++) await run();
  const started = performance.now();
  for (let done = 0; done < N; done += parallel) await Promise.all(Array.from({ length: parallel }, run));
  const us = ((performance.now() - started) * 1000) / N;
  console.log(`${name.padEnd(48)} ${us.toFixed(1).padStart(8)} µs per call`);
}

await measure("transform in this thread (before)", () => evaluateInSandbox(expression, input, 1000));
await measure("transform in the sandbox, one at a time", () => applyTransform(expression, input, { timeoutMs: 1000 }));
await measure("transform in the sandbox, 32 at once", () => applyTransform(expression, input, { timeoutMs: 1000 }), 32);
const rules = parseFilterRules([{ field: "body.type", operator: "regex", value: "^order\\." }]);
await measure("regex filter rule in the sandbox, one at a time", () => matchesFilter(rules, { ...input, path: "/" }));
sandbox().close();

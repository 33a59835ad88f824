/**
 * `npm run bench:delivery -- --ordered [--keys 1000 --backlog 20000 --concurrency 32]`: ordered
 * delivery (docs/delivery.md, "Ordered delivery") against the same connection unordered. For each of
 * unordered, ordered with `keys` keys, and ordered with one key: a backlog stored while the
 * destination is paused (body.k = n mod keys), then resumed; deliveries/s draining it. Goals: ordered
 * with 1,000 keys at least 50% of unordered; one key at the destination's round-trip rate (one request
 * at a time: the rate of a single sequential fetch loop, measured beside it).
 */
import { adminKey, api, machine, numberArg, startHookrelay, until, type Proc } from "./lib";

export async function benchOrdered(opts: { sink: Proc; sinkCount: () => Promise<number>; resetSink: () => Promise<void> }) {
  const keys = numberArg("keys", 1000);
  const backlog = numberArg("backlog", 20_000);
  const oneKeyBacklog = numberArg("one-key-backlog", 2000);
  const concurrency = numberArg("concurrency", 32);
  console.log(`machine: ${machine()}; delivery concurrency ${concurrency}; ordered bench: ${keys} keys, backlog ${backlog}; one key: ${oneKeyBacklog}\n`);
  const results: [string, string][] = [];

  const drain = async (label: string, connection: Record<string, unknown>, total: number, keyCount: number) => {
    const hr = await startHookrelay({ HOOKRELAY_DELIVERY_CONCURRENCY: String(concurrency) });
    try {
      const key = await adminKey(hr.url);
      const source = (await api(hr.url, key, "POST", "/sources", { name: "bench" })).source;
      const destination = (await api(hr.url, key, "POST", "/destinations", { name: "sink", url: `${opts.sink.url}/hook`, status: "paused" })).destination;
      await api(hr.url, key, "POST", "/connections", { name: "bench", source_id: source.id, destination_id: destination.id, ...connection });
      const url = `${hr.url}/v1/ingest/${source.id}`;
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let i = next++; i < total; i = next++) {
            const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: `{"type":"order.created","k":"k${i % keyCount}","n":${i}}` });
            await res.arrayBuffer();
          }
        }),
      );
      await Bun.sleep(500);
      await opts.resetSink();
      const started = performance.now();
      await api(hr.url, key, "PATCH", `/destinations/${destination.id}`, { status: "active" });
      await until(async () => (await opts.sinkCount()) >= total, 900_000, `${label} drained`);
      const rate = Math.round(total / ((performance.now() - started) / 1000));
      console.log(`${label}: ${total} in ${((performance.now() - started) / 1000).toFixed(1)} s, ${rate}/s`);
      results.push([`${label} (deliveries/s)`, String(rate)]);
      return rate;
    } finally {
      await hr.stop();
    }
  };

  const unordered = await drain("unordered", {}, backlog, keys);
  const ordered = await drain(`ordered, ${keys} keys`, { ordered: true, ordering_key: "body.k" }, backlog, keys);
  const one = await drain("ordered, one key", { ordered: true, ordering_key: "body.k" }, oneKeyBacklog, 1);
  // The destination's round-trip rate: one request at a time, as one key is sent.
  const rttStart = performance.now();
  let n = 0;
  while (performance.now() - rttStart < 3000) {
    await (await fetch(`${opts.sink.url}/bare`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"type":"order.created","k":"k0"}` })).arrayBuffer();
    n++;
  }
  const rtt = Math.round(n / ((performance.now() - rttStart) / 1000));
  results.push(["one request at a time, bare fetch loop (requests/s)", String(rtt)]);
  results.push([`ordered ${keys} keys / unordered`, `${Math.round((ordered / unordered) * 100)}%`]);
  results.push(["ordered one key / bare sequential loop", `${Math.round((one / rtt) * 100)}%`]);
  console.log("");
  const w = Math.max(...results.map(([k]) => k.length));
  console.log(`| ${"measure".padEnd(w)} | value |`);
  console.log(`|${"-".repeat(w + 2)}|-------|`);
  for (const [k, v] of results) console.log(`| ${k.padEnd(w)} | ${v} |`);
}

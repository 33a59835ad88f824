import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A receiver that misbehaves the way real ones do: it answers 500, hangs
 * past any sane timeout, or resets the connection mid-request, each with a
 * given probability, decided by a seeded generator so a failing run can be
 * reproduced. Built on node:http because a socket can only be reset there.
 */
export type FlakyAnswer = "ok" | "error" | "hang" | "reset";

export interface FlakyRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  answer: FlakyAnswer;
}

export interface FlakySink {
  url: string;
  requests: FlakyRequest[];
  close(): Promise<void>;
}

/** mulberry32: small, fast, good enough to spread failures. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startFlakySink(opts: { seed: number; error: number; hang: number; reset: number; hangMs: number }): Promise<FlakySink> {
  const random = seeded(opts.seed);
  const requests: FlakyRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = random();
      const answer: FlakyAnswer = r < opts.reset ? "reset" : r < opts.reset + opts.hang ? "hang" : r < opts.reset + opts.hang + opts.error ? "error" : "ok";
      requests.push({ path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), answer });
      if (answer === "reset") return req.socket.destroy();
      if (answer === "error") return res.writeHead(500).end("flaky");
      if (answer === "hang") {
        hanging.add(res);
        const t = setTimeout(() => {
          hanging.delete(res);
          res.writeHead(200).end("too late");
        }, opts.hangMs);
        res.on("close", () => clearTimeout(t));
        return;
      }
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

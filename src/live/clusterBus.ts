import type { SQL } from "bun";
import type { Bus, BusMessage } from "../core/bus";
import type { Logger } from "../observability/logger";
import { errorMessage } from "../contracts/errors";

/**
 * The bus across the nodes of one PostgreSQL database (docs/decisions.md D13): what one
 * node publishes reaches every node through LISTEN/NOTIFY.
 *
 * - Publishers publish after their commit; the NOTIFY goes out on a pool
 *   connection after that, so a node that hears of an event id can read it.
 * - The messages of one event-loop turn travel together in as few NOTIFYs
 *   as fit PostgreSQL's 8000-byte payload (identical ones once): at high
 *   ingest rates one NOTIFY per event would be a round trip per event.
 * - Each payload carries the sending node's id; a node drops its own (it
 *   already published them in process).
 * - Notifications are best effort: those sent while the listening connection
 *   is down are lost. Bun.SQL reconnects and re-subscribes by itself; then
 *   this node publishes `bus.resumed` so every listener re-reads what it
 *   watches, and the slow polls stay as the safety net.
 */
export const BUS_CHANNEL = "hookrelay_bus";
/** PostgreSQL refuses a payload of 8000 bytes or more; the envelope needs a little room. */
const MAX_PAYLOAD_BYTES = 7800;

/** Messages that only mean something in this process. */
const LOCAL_ONLY = new Set<BusMessage["type"]>(["bus.resumed"]);

const received = new WeakSet<BusMessage>();
/** Whether the message was published by another node (and arrived through PostgreSQL). */
export function fromAnotherNode(message: BusMessage): boolean {
  return received.has(message);
}

export interface ClusterBus extends Bus {
  /** Sends what is still waiting, then stops listening. */
  stop(): Promise<void>;
}

interface Envelope {
  /** The sending node. */
  n: string;
  m: BusMessage[];
}

export async function createClusterBus(client: SQL, local: Bus, opts: { nodeId: string; logger: Logger; channel?: string }): Promise<ClusterBus> {
  const channel = opts.channel ?? BUS_CHANNEL;
  const { nodeId, logger } = opts;
  let pending = new Set<string>();
  let flushing: ReturnType<typeof setImmediate> | null = null;
  let sent: Promise<void> = Promise.resolve();
  let stopped = false;

  const flush = () => {
    flushing = null;
    const batch = [...pending];
    pending = new Set();
    if (batch.length === 0) return;
    const payloads = envelopes(nodeId, batch);
    sent = Promise.all(
      payloads.map((p) =>
        client.notify(channel, p).catch((error) => {
          // The other nodes' slow polls pick the work up; nothing here is lost from the database.
          logger.warn("could not notify the other nodes", { error: errorMessage(error) });
        }),
      ),
    ).then(() => {});
  };

  const onNotify = (payload: string) => {
    if (stopped) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch {
      return;
    }
    if (envelope.n === nodeId || !Array.isArray(envelope.m)) return;
    for (const m of envelope.m) {
      received.add(m);
      local.publish(m);
    }
  };

  // Bun.SQL runs onlisten at the first LISTEN and again after every reconnect.
  let listens = 0;
  const onListen = () => {
    if (stopped || ++listens === 1) return;
    logger.info("listening to the other nodes again; what they announced meanwhile is read from the database");
    local.publish({ type: "bus.resumed" });
  };

  const subscription = await client.listen(channel, onNotify, onListen);

  return {
    publish(message) {
      local.publish(message);
      if (stopped || LOCAL_ONLY.has(message.type)) return;
      pending.add(JSON.stringify(message));
      flushing ??= setImmediate(flush);
    },
    subscribe: (listener) => local.subscribe(listener),
    async stop() {
      if (stopped) return;
      if (flushing) {
        clearImmediate(flushing);
        flush();
      }
      stopped = true;
      await sent;
      await subscription.unlisten().catch(() => {});
    },
  };
}

/** The batch's messages (JSON texts) packed into as few payloads as fit. */
export function envelopes(nodeId: string, messages: string[]): string[] {
  const head = `{"n":${JSON.stringify(nodeId)},"m":[`;
  const out: string[] = [];
  let body: string[] = [];
  let bytes = Buffer.byteLength(head) + 2;
  for (const m of messages) {
    const size = Buffer.byteLength(m) + 1;
    // A single message larger than a payload cannot happen (ids and types only); it would be sent alone and refused.
    if (body.length > 0 && bytes + size > MAX_PAYLOAD_BYTES) {
      out.push(head + body.join(",") + "]}");
      body = [];
      bytes = Buffer.byteLength(head) + 2;
    }
    body.push(m);
    bytes += size;
  }
  if (body.length > 0) out.push(head + body.join(",") + "]}");
  return out;
}

/**
 * This process among the nodes sharing one database: who it is and the
 * timing every node agrees on (docs/decisions.md D13). The rows live in
 * `nodes` (src/cluster/nodes.ts).
 */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** Three missed heartbeats. */
export const NODE_TIMEOUT_MS = 15_000;
/** Rows of nodes gone this long are deleted. */
export const NODE_FORGET_AFTER_MS = 24 * 3_600_000;

export interface ThisNode {
  id: string;
  version: string;
  address: string;
}

export function newNodeId(): string {
  return "node_" + Bun.randomUUIDv7("hex").replaceAll("-", "");
}

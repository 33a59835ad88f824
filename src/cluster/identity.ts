import { hostname } from "node:os";
import pkg from "../../package.json" with { type: "json" };
import { newNodeId, type ThisNode } from "../core/node";

/** A new identity for this process: every start is a new node (its claims and heartbeat are its own). */
export function newThisNode(address: string): ThisNode {
  return { id: newNodeId(), version: pkg.version, address };
}

/**
 * Where this node answers HTTP, as its peers and an operator would reach it.
 * Not HOOKRELAY_BASE_URL: behind a load balancer every node shares that one.
 * A wildcard bind is reached through the machine's host name.
 */
export function nodeAddress(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "::" || host === "" ? hostname() : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

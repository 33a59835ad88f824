import { z } from "zod";

/** GET /v1/cluster: the `serve` nodes sharing this database (docs/scaling.md). */

export const clusterNode = z.object({
  id: z.string().describe("`node_` + 32 hex characters; new at every start of a process"),
  version: z.string().describe("hookrelay version the node runs"),
  started_at: z.string().describe("When the node started (ISO 8601)"),
  last_heartbeat_at: z.string().describe("The node's last heartbeat (every 5 s; a node 15 s late is gone and no longer listed)"),
  address: z.string().describe("Where the node itself answers HTTP (http://host:port), not the shared base URL"),
  hostname: z.string().describe("Host name of the machine the node runs on"),
  pid: z.number().int().describe("Process id on that machine"),
  self: z.boolean().describe("The node that answered this request"),
  scheduler: z.boolean().describe("The node running the cluster-wide jobs (retention, job runners, periodic alerts, collection builders); one at a time"),
});
export type ClusterNode = z.infer<typeof clusterNode>;

export const clusterBody = z.object({
  nodes: z.array(clusterNode).describe("The live nodes, oldest first"),
});
export type ClusterBody = z.infer<typeof clusterBody>;

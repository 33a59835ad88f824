import type { ClusterBody } from "../contracts/cluster";
import type { Deps } from "../domain/deps";
import { liveNodes } from "./nodes";
import { schedulerNodeId } from "./schedulerLease";

/** GET /v1/cluster: the live nodes, which one answered, and which one is the scheduler. */
export async function listCluster({ db, store, clock, node }: Deps): Promise<ClusterBody> {
  const live = await liveNodes(db, clock.now());
  const scheduler = await schedulerNodeId({ db, store }, live);
  return {
    nodes: live.map((n) => ({
      id: n.id,
      version: n.version,
      started_at: n.startedAt,
      last_heartbeat_at: n.lastHeartbeatAt,
      address: n.address,
      hostname: n.hostname,
      pid: n.pid,
      self: n.id === node.id,
      scheduler: n.id === scheduler,
    })),
  };
}

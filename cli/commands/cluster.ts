import type { Command } from "commander";
import type { ClusterBody } from "../../src/contracts/cluster";
import { act, verb } from "../command";

/** `hookrelay cluster`: the serve nodes sharing the database (GET /v1/cluster). */
export function registerCluster(program: Command) {
  act(
    verb(program, "cluster", "The serve nodes sharing this database: version, address, last heartbeat, which one is the scheduler", [
      "hookrelay cluster",
      "hookrelay cluster --json",
      "hookrelay cluster --database-url postgres://hookrelay@db/hookrelay   # local mode: lists the nodes, is none of them",
    ]),
    async (ctx) => {
      const res = await ctx.run<ClusterBody>({
        method: "GET",
        path: "/cluster",
        expect: "nodes",
        local: async (deps) => (await import("../../src/cluster/listing")).listCluster(deps),
      });
      ctx.out.result(res, {
        list: "nodes",
        columns: [
          "id",
          "version",
          "address",
          { key: "host", get: (n) => `${n.hostname} (pid ${n.pid})` },
          "started_at",
          "last_heartbeat_at",
          { key: "role", get: (n) => [n.scheduler ? "scheduler" : "", n.self ? "answered" : ""].filter(Boolean).join(", ") },
        ],
        empty: "No live node: no serve runs on this database.",
      });
    },
  );
}

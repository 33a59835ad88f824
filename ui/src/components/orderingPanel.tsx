/** An ordered connection's or endpoint's keys waiting behind their head or blocked (docs/delivery.md, "Ordered delivery"). */
import { api } from "../api";
import type { OrderingLineDto } from "../../../src/contracts/ordering";
import { useAction, useInterval, useLoad } from "../hooks";
import { Can } from "../can";
import { ErrorAlert } from "./layout";
import { DataTable } from "./table";
import { Time } from "./time";
import { toast } from "./toasts";

/** `path`: the target's API path (…/connections/{id} or …/endpoints/{id}); its /ordering lists, /ordering/skip skips. */
export function OrderingPanel({ path }: { path: string }) {
  const lines = useLoad(() => api.get<{ keys: OrderingLineDto[] }>(`${path}/ordering`), [path]);
  const { busy, error, run } = useAction();
  useInterval(() => void lines.reload(), 5000);
  const keys = lines.data?.keys ?? [];
  const skip = (key: string | null) =>
    run(async () => {
      await api.post(`${path}/ordering/skip`, { key });
      toast(`Key ${key === null ? "(none)" : key} moves on`);
      await lines.reload();
    });
  return (
    <section className="panel" data-testid="ordering-panel" aria-label="Ordering keys">
      <div className="panel-head">
        <h2>Ordered delivery</h2>
      </div>
      <ErrorAlert error={lines.error ?? error} />
      {keys.length === 0 ? (
        <p className="muted">No key is waiting: every key's deliveries are going out one at a time, in the order received.</p>
      ) : (
        <DataTable
          label="Keys waiting or blocked"
          rows={keys}
          rowKey={(k) => k.key ?? "\u0000null"}
          columns={[
            { label: "Key", render: (k) => (k.key === null ? <span className="muted">(no key)</span> : <span className="mono">{k.key}</span>) },
            { label: "State", render: (k) => (k.blocked ? <span className="badge err">blocked</span> : <span className="badge">waiting</span>) },
            { label: "Behind the head", className: "num", render: (k) => k.waiting },
            { label: "Since", render: (k) => <Time iso={k.since} /> },
            {
              label: "",
              render: (k) =>
                k.blocked ? (
                  <Can permission="write">
                    <button type="button" className="btn small" disabled={busy} onClick={() => skip(k.key)}>
                      Skip head
                    </button>
                  </Can>
                ) : null,
            },
          ]}
        />
      )}
    </section>
  );
}

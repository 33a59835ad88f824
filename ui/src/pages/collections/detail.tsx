/** One collection: its build, its records, its settings, deleting it. */
import { api } from "../../api";
import { DetailActions } from "../../components/detailActions";
import { ConfirmDialog } from "../../components/dialogs";
import { PageHead, PageLoading } from "../../components/layout";
import { plural } from "../../format";
import { useInterval, useLoad } from "../../hooks";
import { useDeleteResource } from "../../resources";
import { Link } from "../../router";
import type { Collection } from "../../types";
import { BuildPanel } from "./build";
import { CollectionForm } from "./form";
import { RecordsBrowser } from "./records";

export function CollectionDetailPage({ id }: { id: string }) {
  const loaded = useLoad(() => api.get<{ collection: Collection }>(`/collections/${encodeURIComponent(id)}`), [id]);
  const c = loaded.data?.collection;
  const deletion = useDeleteResource("/collections", "Collection", c ?? null);
  // The builder runs in the background: follow it closely while it works, slowly once it is live.
  const working = c ? c.build_status === "backfilling" || c.events_pending > 0 : false;
  useInterval(() => void loaded.reload(), c ? (working ? 1000 : 5000) : null);

  if (!c) return <PageLoading title="Collection" sub={<Link to="/collections">← All collections</Link>} error={loaded.error} onRetry={loaded.reload} />;

  return (
    <>
      <PageHead
        title={c.name}
        sub={<Link to="/collections">← All collections</Link>}
        actions={<DetailActions onDelete={deletion.ask} />}
      />
      {c.description ? <p className="muted">{c.description}</p> : null}
      <BuildPanel c={c} />
      <RecordsBrowser collection={c} />
      <CollectionForm key={c.updated_at} collection={c} onSaved={(saved) => loaded.setData(() => ({ collection: saved }))} />

      <ConfirmDialog {...deletion.dialog} title="Delete this collection?" confirmLabel="Delete collection">
        <p>
          <strong>{c.name}</strong> is deleted with its {plural(c.record_count, "record")} and the changelog of every record, deleted ones included. The source and its events stay. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

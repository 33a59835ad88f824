/** One endpoint: its settings, disabling it, its signing secret, deleting it, its recent delivery attempts and recovering an outage. */
import { useState } from "react";
import { api } from "../../api";
import { DetailActions } from "../../components/detailActions";
import { ConfirmDialog } from "../../components/dialogs";
import { RecoverPanel } from "../../components/recoverPanel";
import { ErrorAlert, PageHead, PageLoading } from "../../components/layout";
import { toast } from "../../components/toasts";
import { useAction, useLoad } from "../../hooks";
import { endpointPath, type AppPlace } from "../../outbound";
import { navigate, useLocation } from "../../router";
import type { Endpoint } from "../../types";
import { EndpointAttempts } from "./attempts";
import { OrderingPanel } from "../../components/orderingPanel";
import { BackToApp } from "../backToApp";
import { EndpointForm } from "./form";
import { SecretPanel } from "./secret";
import { EndpointStatus } from "./status";

export function EndpointPage({ place, id }: { place: AppPlace; id: string }) {
  const loaded = useLoad(() => api.get<{ endpoint: Endpoint }>(endpointPath(place, id)), [place.app.id, id]);
  const e = loaded.data?.endpoint;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const created = useLocation().search.has("created");
  const { busy, error, run } = useAction();

  if (!e) return <PageLoading title="Endpoint" sub={<BackToApp place={place} />} error={loaded.error} onRetry={loaded.reload} />;

  const setStatus = (status: "active" | "disabled") =>
    run(async () => {
      const res = await api.patch<{ endpoint: Endpoint }>(endpointPath(place, e.id), { status });
      loaded.setData(() => res);
      toast(status === "disabled" ? "Endpoint disabled" : "Endpoint enabled");
    });
  const remove = () =>
    run(async () => {
      await api.del(endpointPath(place, e.id));
      toast("Endpoint deleted");
      navigate(place.base);
    });

  return (
    <>
      <PageHead
        title={
          <>
            <span className="mono" style={{ fontSize: 18, overflowWrap: "anywhere" }}>
              {e.url}
            </span>{" "}
            <EndpointStatus endpoint={e} />
          </>
        }
        sub={<BackToApp place={place} />}
        actions={<DetailActions moves={[e.status === "active" ? { label: "Disable", to: "disabled" as const } : { label: "Enable", to: "active" as const }]} busy={busy} onMove={setStatus} onDelete={() => setConfirmDelete(true)} />}
      />
      <ErrorAlert error={confirmDelete ? null : error} />
      {created ? (
        <div className="alert ok" role="status">
          {e.signing_algorithm === "ed25519"
            ? "Endpoint added. Give its public key below to the code behind the URL, so it can check each request."
            : "Endpoint added. Reveal its signing secret below and give it to the code behind the URL, so it can check each request."}
        </div>
      ) : null}
      {e.status === "disabled" ? (
        <div className="alert warn" role="status">
          Disabled: nothing is sent to this endpoint until it is enabled again. An endpoint whose deliveries keep failing without a single success is disabled automatically.
        </div>
      ) : null}
      {e.portal_held === 1 && !place.portal ? (
        <p className="muted" data-testid="portal-held">
          Its URL was set through a portal link: deliveries may only go to public addresses, unless the application allows private endpoints (Settings). Changing the URL here makes it yours again.
        </p>
      ) : null}
      {e.description ? <p className="muted">{e.description}</p> : null}
      <SecretPanel place={place} endpoint={e} />
      <EndpointForm key={e.updated_at} place={place} endpoint={e} onSaved={(saved) => loaded.setData(() => ({ endpoint: saved }))} />
      {e.ordered && !place.portal ? <OrderingPanel path={endpointPath(place, e.id)} /> : null}
      <EndpointAttempts place={place} endpoint={e} />
      {/* Operators only: a portal link cannot start a recovery. */}
      {place.portal ? null : <RecoverPanel path={endpointPath(place, e.id)} what="message" />}

      <ConfirmDialog open={confirmDelete} title="Delete this endpoint?" confirmLabel="Delete endpoint" busy={busy} error={error} onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
        <p>
          <strong className="mono" style={{ overflowWrap: "anywhere" }}>
            {e.url}
          </strong>{" "}
          stops receiving webhooks at once: messages still waiting to be sent to it are never sent, and it cannot be resent to. Its past attempts stay in each message's history. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** One application: tabs for its endpoints, its messages (sending one included) and its settings. */
import { useState } from "react";
import { api } from "../../api";
import { StatusBadge } from "../../components/badges";
import { DetailActions } from "../../components/detailActions";
import { ConfirmDialog } from "../../components/dialogs";
import { PageHead } from "../../components/layout";
import { Tabs } from "../../components/tabs";
import { toast } from "../../components/toasts";
import { fullTime } from "../../format";
import { useAction } from "../../hooks";
import type { AppPlace } from "../../outbound";
import { Link, navigate } from "../../router";
import type { Application, Message } from "../../types";
import { EndpointsPanel } from "../endpoints/list";
import { SendMessagePanel } from "../messages/send";
import { MessagesPanel } from "../messages/list";
import { ApplicationForm } from "./form";
import { PortalLinkButton, RevokePortalLinksButton } from "./portalLinks";
import { WithApplication } from "./withApplication";
import { Can } from "../../can";

export type AppTab = "endpoints" | "messages" | "settings";

export function ApplicationPage({ id, tab }: { id: string; tab: AppTab }) {
  return <WithApplication id={id} title="Application">{(place, setApp) => <ApplicationDetail place={place} tab={tab} onSaved={setApp} />}</WithApplication>;
}

function ApplicationDetail({ place, tab, onSaved }: { place: AppPlace; tab: AppTab; onSaved: (a: Application) => void }) {
  const { app } = place;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [sent, setSent] = useState<Message | null>(null);
  const { busy, error, run } = useAction();
  const remove = () =>
    run(async () => {
      await api.del(`/applications/${encodeURIComponent(app.id)}`);
      toast(`Application “${app.name}” deleted`);
      navigate("/applications");
    });

  return (
    <>
      <PageHead
        title={
          <>
            {app.name} <StatusBadge status={app.status} />
          </>
        }
        sub={
          <>
            <Link to="/applications">← All applications</Link> · uid <span className="mono">{app.uid}</span>
          </>
        }
        actions={
          <DetailActions onDelete={() => setConfirmDelete(true)}>
            <Can permission="write">
              <PortalLinkButton app={app} />
              <RevokePortalLinksButton app={app} />
            </Can>
          </DetailActions>
        }
      />
      {app.description ? <p className="muted">{app.description}</p> : null}
      {app.status !== "active" ? <div className="alert warn">Disabled: sending messages to {app.name} is refused (409) until its status is active again. Its endpoints and history stay.</div> : null}
      <Tabs
        label="Application"
        tabs={[
          { id: "endpoints", label: "Endpoints" },
          { id: "messages", label: "Messages" },
          { id: "settings", label: "Settings" },
        ]}
        value={tab}
        onChange={(t) => navigate(t === "endpoints" ? place.base : `${place.base}/${t}`)}
      />
      {tab === "endpoints" ? <EndpointsPanel place={place} /> : null}
      {tab === "messages" ? (
        <>
          <Can permission="write">
            <SendMessagePanel place={place} onSent={setSent} />
          </Can>
          <MessagesPanel place={place} sent={sent} />
        </>
      ) : null}
      {tab === "settings" ? (
        <>
          <ApplicationForm key={app.updated_at} application={app} onSaved={onSaved} />
          <section className="panel" aria-label="Identifiers">
            <dl className="kv">
              <dt>Id</dt>
              <dd className="mono">{app.id}</dd>
              <dt>UID</dt>
              <dd className="mono">{app.uid}</dd>
              <dt>Created</dt>
              <dd>{fullTime(app.created_at)}</dd>
            </dl>
          </section>
        </>
      ) : null}

      <ConfirmDialog open={confirmDelete} title="Delete this application?" confirmLabel="Delete application" busy={busy} error={error} onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
        <p>
          <strong>{app.name}</strong> is deleted with its endpoints, every message sent to it and their delivery history; messages still waiting to be sent are never sent, and its portal links stop working. Sending to{" "}
          <code>{app.uid}</code> answers 404 afterwards. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

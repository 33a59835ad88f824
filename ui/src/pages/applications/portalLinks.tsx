/** The consumer portal link of an application: creating one, revoking every one issued. */
import { useState } from "react";
import { api } from "../../api";
import { CopyField } from "../../components/copy";
import { ConfirmDialog, Modal } from "../../components/dialogs";
import { toast } from "../../components/toasts";
import { fullTime, timeAgo } from "../../format";
import { useAction } from "../../hooks";
import type { Application, PortalLink } from "../../types";

/** Creates a consumer portal link and shows it, with a copy button and when it expires. */
export function PortalLinkButton({ app }: { app: Application }) {
  const [link, setLink] = useState<PortalLink | null>(null);
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  const create = () =>
    run(async () => {
      setLink(await api.post<PortalLink>(`/applications/${encodeURIComponent(app.id)}/portal`, {}));
      setOpen(true);
    });
  return (
    <>
      <button type="button" className="btn" disabled={busy} onClick={create}>
        {busy ? "Creating link…" : "Portal link"}
      </button>
      {error && !open ? (
        <span className="field-error" role="alert">
          {error}
        </span>
      ) : null}
      <Modal open={open} onClose={() => setOpen(false)} title="Consumer portal link" wide>
        {link ? (
          <div style={{ display: "grid", gap: 12 }}>
            <p style={{ margin: 0 }}>
              Whoever opens this link can manage <strong>{app.name}</strong>'s endpoints (add, edit, disable, reveal and rotate their secrets) and see its messages with every delivery attempt, without logging in. It grants nothing else.
              Send it only to the customer it is for.
            </p>
            <CopyField value={link.url} label="Portal link" />
            <p className="muted" style={{ margin: 0 }} data-testid="portal-expiry">
              Expires {fullTime(link.expires_at)} ({timeAgo(link.expires_at)}). Create a new link whenever one is needed; “Revoke links” ends every link issued so far.
            </p>
            <div className="btn-row" style={{ justifyContent: "flex-end", marginTop: 0 }}>
              <button type="button" className="btn" onClick={() => setOpen(false)}>
                Close
              </button>
              <a className="btn primary" href={link.url} target="_blank" rel="noopener noreferrer">
                Open the portal
              </a>
            </div>
          </div>
        ) : null}
      </Modal>
    </>
  );
}

/** Revokes every portal link issued for the application so far, after asking. */
export function RevokePortalLinksButton({ app }: { app: Application }) {
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  const revoke = () =>
    run(async () => {
      await api.post(`/applications/${encodeURIComponent(app.id)}/portal/revoke`, {});
      setOpen(false);
      toast("Every portal link issued so far is revoked");
    });
  return (
    <>
      <button type="button" className="btn" title="Revoke every portal link issued so far" onClick={() => setOpen(true)}>
        Revoke links
      </button>
      <ConfirmDialog open={open} title="Revoke every portal link?" confirmLabel="Revoke links" busy={busy} error={error} onConfirm={revoke} onCancel={() => setOpen(false)}>
        <p>
          Every portal link issued for <strong>{app.name}</strong> so far stops working at once, wherever it is open. Links you create afterwards work.
        </p>
      </ConfirmDialog>
    </>
  );
}

import { useEffect } from "react";
import { AttemptExchange } from "../../attemptExchange";
import { listedAttemptTimes, notSentText } from "../../attemptTime";
import { StatusBadge } from "../../components/badges";
import { Modal } from "../../components/dialogs";
import { ErrorAlert } from "../../components/layout";
import { fullTime } from "../../format";
import { endpointPage, isExpired, type AppPlace } from "../../outbound";
import { Link } from "../../router";
import type { DeliveryAttempt, Endpoint, Message } from "../../types";
import { useResend } from "./resend";
import { Can } from "../../can";

/** One attempt: the request sent (headers and the payload as its body) and the response received; resend to its endpoint. */
export function AttemptDialog({
  place,
  message,
  attempt: a,
  endpoint,
  onClose,
  onResent,
}: {
  place: AppPlace;
  message: Message;
  attempt: DeliveryAttempt | null;
  endpoint: Endpoint | undefined;
  onClose: () => void;
  onResent: () => void;
}) {
  const { busy, error, setError, resend } = useResend(place, message, () => {
    onResent();
    onClose();
  });
  useEffect(() => setError(null), [a, setError]);
  const times = a ? listedAttemptTimes(a) : null;
  const notSent = times !== null && times.sent === null;
  const canResend = endpoint !== undefined && endpoint.status === "active" && !isExpired(endpoint);
  return (
    <Modal open={a !== null} onClose={onClose} title="Delivery attempt" wide>
      {a && times ? (
        <div style={{ display: "grid", gap: 14 }}>
          <dl className="kv">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={a.status} /> {a.is_dlq ? <span className="badge bad">retries used up {fullTime(a.dlq_at)}</span> : null}
            </dd>
            <dt>Attempt</dt>
            <dd>
              #{a.attempt_number ?? "–"} ({a.trigger_type ?? "–"})
            </dd>
            <dt>Sent</dt>
            <dd>{times.sent ? fullTime(times.sent) : <span className="muted">{notSentText(times)}</span>}</dd>
            {a.next_retry_at ? (
              <>
                <dt>Next retry</dt>
                <dd>{fullTime(a.next_retry_at)}</dd>
              </>
            ) : null}
            <dt>Endpoint</dt>
            <dd>
              {endpoint ? (
                <Link to={endpointPage(place, endpoint.id)} onClick={onClose} className="mono">
                  {endpoint.url}
                </Link>
              ) : (
                <span className="muted">deleted</span>
              )}
            </dd>
            {a.error ? (
              <>
                <dt>Error</dt>
                <dd>
                  <span className="mono">{a.error}</span> {a.error_detail ? <span>{a.error_detail}</span> : null}
                </dd>
              </>
            ) : null}
          </dl>
          <AttemptExchange attempt={a} requestBody={message.payload} />
          <ErrorAlert error={error} />
          <div className="btn-row" style={{ justifyContent: "flex-end" }}>
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
            <Can permission="write">
              <button
                type="button"
                className="btn primary"
                disabled={!canResend || busy}
                title={canResend ? undefined : "The endpoint is deleted, disabled or expired"}
                onClick={() => endpoint && resend(endpoint)}
              >
                {busy ? "Resending…" : "Resend to this endpoint"}
              </button>
            </Can>
          </div>
        </div>
      ) : null}
    </Modal>
  );
}

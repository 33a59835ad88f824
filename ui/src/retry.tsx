/**
 * Retrying one event. The server refuses a rejected event (its signature or
 * schema check failed: it may be forged) with 409 and says why; an operator who
 * has checked the payload may still deliver it, after a confirmation that
 * looks as dangerous as it is, with `force: true` (recorded on the attempt).
 */
import { useCallback, useState } from "react";
import { api, ApiError, errorMessage } from "./api";
import { ConfirmDialog } from "./components/dialogs";
import { toast } from "./components/toasts";
import { plural } from "./format";

export interface RetryResult {
  retried: { destination_id: string; connection_id: string; attempt_id: string; status: string }[];
  errors: { destination_id: string; connection_id: string; code: string; message: string }[];
}

export interface EventRetry {
  busy: boolean;
  /** A failure other than the refusal. */
  error: string | null;
  /** The server's reason for refusing (409), while the refusal stands. */
  refused: string | null;
  confirming: boolean;
  retry: () => Promise<void>;
  /** Opens the "Deliver anyway" confirmation. */
  askForce: () => void;
  /** Closes the confirmation (the refusal stays shown). */
  cancelForce: () => void;
  force: () => Promise<void>;
  reset: () => void;
}

/** POST /v1/events/{id}/retry, and with `force: true` once confirmed; onDone gets the answer. */
export function useEventRetry(eventId: string | null, onDone: (r: RetryResult, forced: boolean) => void): EventRetry {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);

  const send = useCallback(
    async (force: boolean) => {
      if (!eventId) return;
      setBusy(true);
      setError(null);
      try {
        const r = await api.post<RetryResult>(`/events/${encodeURIComponent(eventId)}/retry`, force ? { force: true } : {});
        setRefused(null);
        setConfirming(false);
        onDone(r, force);
      } catch (e) {
        if (!force && e instanceof ApiError && e.code === "conflict") setRefused(e.message);
        else setError(errorMessage(e));
      } finally {
        setBusy(false);
      }
    },
    [eventId, onDone],
  );

  return {
    busy,
    error,
    refused,
    confirming,
    retry: () => send(false),
    askForce: () => {
      setError(null);
      setConfirming(true);
    },
    cancelForce: () => setConfirming(false),
    force: () => send(true),
    reset: () => {
      setError(null);
      setRefused(null);
      setConfirming(false);
    },
  };
}

/** The toast after a retry: how many deliveries were queued, and whether they were forced. */
export function retryToast(r: RetryResult, forced: boolean) {
  if (r.retried.length === 0) return toast("Nothing to retry", "error");
  toast(`${forced ? "Delivering anyway: queued" : "Queued"} ${plural(r.retried.length, "delivery", "deliveries")}`);
}

/** The refusal in words with the way past it, and the confirmation that sends force: true. */
export function RefusedRetry({ state }: { state: EventRetry }) {
  if (!state.refused) return null;
  return (
    <>
      <div className="alert error" role="alert" data-testid="retry-refused">
        <strong>Not retried.</strong> {state.refused}
        <div className="btn-row" style={{ marginTop: 8 }}>
          <button type="button" className="btn small danger" onClick={state.askForce}>
            Deliver anyway…
          </button>
        </div>
      </div>
      <ConfirmDialog open={state.confirming} title="Deliver a rejected event?" confirmLabel="Deliver anyway" busy={state.busy} error={state.error} onConfirm={state.force} onCancel={state.cancelForce}>
        <p>{state.refused}</p>
        <p>
          A rejected event may be <strong>forged</strong>: anyone who knows the ingest URL can send requests to it. Delivering it hands this payload to every connected destination as if the provider had sent it, and
          they may act on it (ship an order, grant access). This cannot be taken back.
        </p>
        <p>Only continue if you have checked the body and headers yourself. The attempt is recorded as forced.</p>
      </ConfirmDialog>
    </>
  );
}

/** Resending a message to one endpoint: a new delivery with a fresh retry budget. */
import { useState } from "react";
import { api } from "../../api";
import { Field, NamedOptions } from "../../components/forms";
import { ErrorAlert } from "../../components/layout";
import { toast } from "../../components/toasts";
import { useAction } from "../../hooks";
import { endpointLabel, isExpired, messagePath, type AppPlace } from "../../outbound";
import type { Endpoint, Message } from "../../types";

export function useResend(place: AppPlace, message: Message, onResent: () => void) {
  const { busy, error, setError, run } = useAction();
  const resend = (endpoint: Endpoint) =>
    run(async () => {
      await api.post(messagePath(place, message.id, "/resend"), { endpoint_id: endpoint.id });
      toast(`Resending to ${endpointLabel(endpoint)}`);
      onResent();
    });
  return { busy, error, setError, resend };
}

/** Send the message again to one endpoint (a new delivery with a fresh retry budget). */
export function ResendPanel({ place, message, endpoints, onResent }: { place: AppPlace; message: Message; endpoints: Endpoint[] | undefined; onResent: () => void }) {
  const [chosen, setChosen] = useState("");
  const { busy, error, resend } = useResend(place, message, onResent);
  const usable = (endpoints ?? []).filter((e) => e.status === "active" && !isExpired(e));
  const endpoint = usable.find((e) => e.id === chosen) ?? (usable.length === 1 ? usable[0] : undefined);
  if (endpoints && endpoints.length === 0) return null;
  return (
    <section className="panel" aria-label="Resend">
      <h2>Resend</h2>
      <p className="muted" style={{ marginTop: 0 }}>
        Sends this message to one endpoint again, whatever happened before (a failed delivery leaves the failed state). Disabled and expired endpoints are not offered.
      </p>
      <ErrorAlert error={error} />
      <div className="filters" style={{ marginBottom: 0 }}>
        <Field label="Endpoint">
          {(p) => (
            <select {...p} value={endpoint?.id ?? ""} onChange={(e) => setChosen(e.target.value)}>
              {endpoint ? null : (
                <option value="" disabled>
                  {usable.length === 0 ? "No active endpoint" : "Choose an endpoint…"}
                </option>
              )}
              <NamedOptions items={usable.map((e) => ({ id: e.id, name: e.description ? `${e.description} (${e.url})` : e.url }))} />
            </select>
          )}
        </Field>
        <button type="button" className="btn primary" disabled={!endpoint || busy} onClick={() => endpoint && resend(endpoint)}>
          {busy ? "Resending…" : "Resend"}
        </button>
      </div>
    </section>
  );
}

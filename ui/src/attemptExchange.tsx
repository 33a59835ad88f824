/**
 * The request a delivery attempt sent and the response it got, as the attempt
 * dialogs of the delivery attempts page, an issue and an application's
 * message show it; for an attempt not sent yet, when it is due.
 */
import { listedAttemptTimes, notSentText } from "./attemptTime";
import { CodeBlock } from "./components/code";
import { bytes, ms } from "./format";
import type { DeliveryAttempt } from "./types";

/** requestBody: the body sent, when the page knows it (a message's payload); attempts store only its size. */
export function AttemptExchange({ attempt: a, requestBody }: { attempt: DeliveryAttempt; requestBody?: string }) {
  const times = listedAttemptTimes(a);
  const notSent = times.sent === null;
  return (
    <>
      <section aria-label="Request">
        <h3>
          Request · <span className="mono">{a.request_method}</span> <span className="mono" style={{ overflowWrap: "anywhere" }}>{a.request_url}</span>
          {notSent ? null : <> · {bytes(a.request_body_size)}</>}
        </h3>
        {notSent ? (
          <p className="muted">{notSentText(times)}</p>
        ) : requestBody === undefined ? (
          <CodeBlock text={a.request_headers} label="Request headers" />
        ) : (
          <>
            <CodeBlock text={a.request_headers} label="Request headers" />
            <div style={{ height: 8 }} />
            <CodeBlock text={requestBody} label="Request body" />
          </>
        )}
      </section>
      <section aria-label="Response">
        {notSent ? (
          <>
            <h3>Response</h3>
            <p className="muted">No response yet: the request has not been sent.</p>
          </>
        ) : (
          <>
            <h3>
              Response · {a.response_status ?? "none"} · {ms(a.duration_ms)}
            </h3>
            <CodeBlock text={a.response_headers} label="Response headers" empty="No headers: no response was received." />
            <div style={{ height: 8 }} />
            <CodeBlock text={a.response_body} label="Response body" empty={a.response_status ? "Empty body." : "No body: no response was received."} />
          </>
        )}
      </section>
    </>
  );
}

/** An endpoint's recent delivery attempts. */
import { useState } from "react";
import { api } from "../../api";
import { AttemptWhen, listedAttemptTimes } from "../../attemptTime";
import { StatusBadge } from "../../components/badges";
import { CursorPager } from "../../components/cursorPager";
import { Empty } from "../../components/layout";
import { DataTable } from "../../components/table";
import { ms, num, shortId } from "../../format";
import { useInterval, useLoad } from "../../hooks";
import { endpointPath, messageIdOf, messagePage, type AppPlace } from "../../outbound";
import { ListPanel } from "../../resources";
import { Link, navigate } from "../../router";
import type { DeliveryAttempt, Endpoint } from "../../types";

const ATTEMPTS_PAGE = 20;

/** The endpoint's latest attempts, newest first, in cursor pages; each links to its message. */
export function EndpointAttempts({ place, endpoint }: { place: AppPlace; endpoint: Endpoint }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const attempts = useLoad(
    () => api.get<{ attempts: DeliveryAttempt[]; cursor: string | null }>(endpointPath(place, endpoint.id, "/attempts"), { cursor, limit: ATTEMPTS_PAGE }),
    [endpoint.id, cursor],
  );
  const rows = attempts.data?.attempts ?? [];
  const inFlight = cursors.length === 0 && rows.some((a) => a.status === "queued" || a.status === "delivering");
  useInterval(() => void attempts.reload(), inFlight ? 2000 : null);
  return (
    <>
      <div className="panel-head" style={{ marginTop: 8 }}>
        <h2>Recent deliveries</h2>
      </div>
      <ListPanel
        label="Recent deliveries"
        loaded={attempts}
        what="Loading deliveries"
        isEmpty={rows.length === 0 && cursors.length === 0}
        empty={<Empty title="Nothing sent here yet">Messages whose event type the endpoint receives are delivered here; each attempt shows up with its response.</Empty>}
      >
        <DataTable
          label="Recent deliveries"
          rows={rows}
          rowKey={(a) => a.id}
          onRowClick={(a) => navigate(messagePage(place, messageIdOf(a)))}
          columns={[
            {
              label: "Message",
              render: (a) => (
                <Link to={messagePage(place, messageIdOf(a))} className="mono">
                  {shortId(messageIdOf(a))}
                </Link>
              ),
            },
            { label: "When", render: (a) => <AttemptWhen times={listedAttemptTimes(a)} /> },
            { label: "Status", render: (a) => (a.is_dlq ? <span className="badge bad">failed, retries used up</span> : <StatusBadge status={a.status} />) },
            { label: "Response", render: (a) => (a.response_status ? <span className="mono">{a.response_status}</span> : <span className="muted">{a.error ?? "–"}</span>) },
            { label: "Duration", className: "num", hideNarrow: true, render: (a) => ms(a.duration_ms) },
            { label: "#", hideNarrow: true, render: (a) => a.attempt_number ?? "–" },
          ]}
        />
        <CursorPager cursors={cursors} setCursors={setCursors} next={attempts.data?.cursor} labels={["Newer", "Older"]} />
      </ListPanel>
    </>
  );
}

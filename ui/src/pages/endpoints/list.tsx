/** An application's endpoints, in the admin UI and in the consumer portal: URL, status, event types, rate limit. */
import { api } from "../../api";
import { Empty } from "../../components/layout";
import { DataTable } from "../../components/table";
import { Time } from "../../components/time";
import { num } from "../../format";
import { useLoad } from "../../hooks";
import { appPath, endpointPage, filterTypesOf, type AppPlace } from "../../outbound";
import { ListPanel } from "../../resources";
import { Link, navigate } from "../../router";
import type { Endpoint } from "../../types";
import { EndpointStatus } from "./status";
import { useCan } from "../../can";

function TypesCell({ endpoint }: { endpoint: Endpoint }) {
  const types = filterTypesOf(endpoint);
  if (!types) return <span className="muted">every type</span>;
  return <span className="mono">{types.length <= 2 ? types.join(", ") : `${types.slice(0, 2).join(", ")} +${types.length - 2}`}</span>;
}

export function EndpointsPanel({ place }: { place: AppPlace }) {
  const endpoints = useLoad(() => api.get<{ endpoints: Endpoint[] }>(appPath(place, "/endpoints")), [place.app.id]);
  const rows = endpoints.data?.endpoints ?? [];
  const canWrite = useCan("write");
  const add = (text: string) =>
    canWrite ? (
      <Link to={`${place.base}/endpoints/new`} className="btn primary">
        {text}
      </Link>
    ) : null;
  return (
    <>
      <div className="panel-head">
        <h2>Endpoints</h2>
        {rows.length > 0 ? add("Add endpoint") : null}
      </div>
      <ListPanel
        label="Endpoints"
        loaded={endpoints}
        what="Loading endpoints"
        isEmpty={rows.length === 0}
        empty={
          <Empty title="No endpoints yet" action={add("Add your first endpoint")}>
            {place.portal
              ? "An endpoint is a URL of yours that receives these webhooks, each request signed so you can check it came from us."
              : `An endpoint is a URL of ${place.app.name}'s that receives its messages, each request signed with the endpoint's secret (Standard Webhooks).`}
          </Empty>
        }
      >
        <DataTable
          label="Endpoints"
          rows={rows}
          rowKey={(e) => e.id}
          onRowClick={(e) => navigate(endpointPage(place, e.id))}
          columns={[
            {
              label: "URL",
              render: (e) => (
                <>
                  <Link to={endpointPage(place, e.id)} className="mono" style={{ overflowWrap: "anywhere" }}>
                    {e.url}
                  </Link>
                  {e.description ? (
                    <div className="muted" style={{ fontSize: 12 }}>
                      {e.description}
                    </div>
                  ) : null}
                </>
              ),
            },
            { label: "Event types", render: (e) => <TypesCell endpoint={e} /> },
            { label: "Status", render: (e) => <EndpointStatus endpoint={e} /> },
            { label: "Rate limit", hideNarrow: true, render: (e) => (e.rate_limit_per_second ? `${num(e.rate_limit_per_second)}/s` : <span className="muted">none</span>) },
            { label: "Created", hideNarrow: true, render: (e) => <Time iso={e.created_at} /> },
          ]}
        />
      </ListPanel>
    </>
  );
}

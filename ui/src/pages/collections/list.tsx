/** The collections page: every collection with its source, record count and build state. */
import { api } from "../../api";
import { Time } from "../../components/time";
import { num, plural } from "../../format";
import { useInterval, useLoad } from "../../hooks";
import { ResourceListPage } from "../../resources";
import { Link } from "../../router";
import type { Collection, Source } from "../../types";
import { BuildBadge } from "./build";

export function CollectionsPage() {
  const collections = useLoad(() => api.get<{ collections: Collection[] }>("/collections"), []);
  const building = collections.data?.collections.some((c) => c.build_status === "backfilling" || c.events_pending > 0) ?? false;
  useInterval(() => void collections.reload(), building ? 2000 : null);
  return (
    <ResourceListPage
      title="Collections"
      noun="collection"
      path="/collections"
      sub="The current state of every record a source's events describe (every order, customer or issue a provider tells you about), with each record's history."
      emptyText="A collection reads a source's events, takes each event's record key from a path in its body, and keeps the latest version of every record with a changelog of its changes."
      loaded={collections}
      rows={collections.data?.collections}
      columns={[
        {
          label: "Name",
          render: (c) => (
            <>
              <Link to={`/collections/${c.id}`}>{c.name}</Link>
              <div className="muted mono" style={{ fontSize: 12 }}>
                key: {c.key_path}
              </div>
            </>
          ),
        },
        { label: "Source", render: (c) => c.source_name ?? <span className="muted mono">{c.source_id}</span> },
        { label: "Records", className: "num", render: (c) => num(c.record_count) },
        { label: "Build", render: (c) => <BuildBadge c={c} /> },
        {
          label: "Problems",
          hideNarrow: true,
          render: (c) =>
            c.events_missing_key + c.events_transform_failed > 0 ? (
              <span className="badge bad" title={c.last_error ?? undefined}>
                {plural(c.events_missing_key + c.events_transform_failed, "event")} not built
              </span>
            ) : (
              <span className="muted">none</span>
            ),
        },
        { label: "Created", hideNarrow: true, render: (c) => <Time iso={c.created_at} /> },
      ]}
    />
  );
}

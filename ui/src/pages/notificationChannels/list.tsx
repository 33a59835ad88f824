/** The notification channels page: every channel with its type and where it sends. */
import { api } from "../../api";
import { Time } from "../../components/time";
import { useLoad } from "../../hooks";
import { ResourceListPage } from "../../resources";
import { Link } from "../../router";
import type { Channel } from "../../types";
import { channelTypeLabel, target } from "./kinds";

export function NotificationChannelsPage() {
  const channels = useLoad(() => api.get<{ channels: Channel[] }>("/notification-channels"), []);
  return (
    <ResourceListPage
      title="Notification channels"
      noun="channel"
      path="/notification-channels"
      sub="Where alert rules send their alerts: a webhook of yours, a Slack or Discord channel, or email."
      emptyText="Create a channel, send it a test, then pick it in an alert rule."
      loaded={channels}
      rows={channels.data?.channels}
      columns={[
        { label: "Name", render: (c) => <Link to={`/notification-channels/${c.id}`}>{c.name}</Link> },
        { label: "Type", render: (c) => channelTypeLabel(c.type) },
        {
          label: "Sends to",
          render: (c) => (
            <span className="mono" style={{ overflowWrap: "anywhere" }}>
              {target(c)}
            </span>
          ),
        },
        { label: "Created", hideNarrow: true, render: (c) => <Time iso={c.created_at} /> },
      ]}
    />
  );
}

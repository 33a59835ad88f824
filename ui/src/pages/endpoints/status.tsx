import { StatusBadge } from "../../components/badges";
import { fullTime } from "../../format";
import { isExpired } from "../../outbound";
import type { Endpoint } from "../../types";

/** Status, with "expired" beside it once expires_at has passed. */
export function EndpointStatus({ endpoint: e }: { endpoint: Endpoint }) {
  return (
    <>
      <StatusBadge status={e.status} />
      {isExpired(e) ? (
        <>
          {" "}
          <span className="badge bad" title={`Expired ${fullTime(e.expires_at)}: it receives nothing`}>
            expired
          </span>
        </>
      ) : null}
    </>
  );
}

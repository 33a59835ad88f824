/** A moment shown as "3 min ago", the full time on hover, kept fresh. */
import { useEffect, useState } from "react";
import { fullTime, timeAgo } from "../format";

export function Time({ iso }: { iso: string | null | undefined }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(t);
  }, []);
  if (!iso) return <span className="muted">never</span>;
  return (
    <time dateTime={iso} title={fullTime(iso)} className="nowrap">
      {timeAgo(iso)}
    </time>
  );
}

import { Empty, PageHead } from "../components/layout";
import { Link, useLocation } from "../router";

export function NotFoundPage() {
  const { path } = useLocation();
  return (
    <>
      <PageHead title="Page not found" />
      <div className="panel">
        <Empty title={`Nothing at ${path}`} action={<Link to="/" className="btn primary">Go to the dashboard</Link>}>
          The link may be old, or the item was deleted.
        </Empty>
      </div>
    </>
  );
}

/** The frame of a page: its head, a spinner, an error with a retry, an empty state. */
import type { ReactNode } from "react";

export function PageHead({ title, sub, actions }: { title: ReactNode; sub?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="page-head">
      <div>
        <h1>{title}</h1>
        {sub ? <div className="sub">{sub}</div> : null}
      </div>
      {actions ? <div className="actions">{actions}</div> : null}
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <div className="spinner" role="status">
      {what}…
    </div>
  );
}

export function ErrorAlert({ error, onRetry }: { error: string | null | undefined; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div className="alert error" role="alert">
      {error}
      {onRetry ? (
        <>
          {" "}
          <button type="button" className="btn small" onClick={onRetry}>
            Try again
          </button>
        </>
      ) : null}
    </div>
  );
}

export function Empty({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children ? <p>{children}</p> : null}
      {action}
    </div>
  );
}

/** A page whose data is still on its way: its head, then a spinner, or the error (with a retry when given). */
export function PageLoading({ title, sub, error, onRetry, what }: { title: ReactNode; sub?: ReactNode; error: string | null | undefined; onRetry?: () => void; what?: string }) {
  return (
    <>
      <PageHead title={title} sub={sub} />
      {error ? <ErrorAlert error={error} onRetry={onRetry} /> : <Loading what={what} />}
    </>
  );
}

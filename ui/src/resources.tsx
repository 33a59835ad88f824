/**
 * Pages of a kind of resource (sources, destinations, connections…): filters kept in the URL, the
 * panel that holds a list, the whole list page, and deleting one from its page.
 */
import { useState, type ReactNode } from "react";
import { api } from "./api";
import { Field } from "./components/forms";
import { Empty, ErrorAlert, Loading, PageHead } from "./components/layout";
import { DataTable, type Column } from "./components/table";
import { toast } from "./components/toasts";
import { useAction, type Loaded } from "./hooks";
import { Link, navigate, setQuery, useLocation } from "./router";
import { useCan } from "./can";

/**
 * A list's filters and page offset, read from the URL query so links and reloads keep them.
 * set() changes filters and goes back to the first page; key changes whenever the list should load again.
 */
export function useQueryFilters<K extends string>(names: readonly K[]) {
  const { search } = useLocation();
  const filters: Partial<Record<K, string>> = {};
  for (const k of names) {
    const v = search.get(k);
    if (v) filters[k] = v;
  }
  const offset = Number(search.get("offset") ?? 0) || 0;
  const set = (patch: Partial<Record<K, string>> & { offset?: string }) => setQuery({ ...filters, offset: undefined, ...patch });
  const setOffset = (o: number) => setQuery({ ...filters, offset: o ? String(o) : undefined });
  return { filters, offset, key: JSON.stringify([filters, offset]), set, setOffset };
}

/** A filter select: "Any" (or anyLabel) first, which clears the filter, then the choices (<Options>, <NamedOptions>). */
export function FilterSelect({ label, anyLabel = "Any", value, onChange, children }: { label: string; anyLabel?: string; value: string | undefined; onChange: (v: string | undefined) => void; children: ReactNode }) {
  return (
    <Field label={label}>
      {(p) => (
        <select {...p} value={value ?? ""} onChange={(e) => onChange(e.target.value || undefined)}>
          <option value="">{anyLabel}</option>
          {children}
        </select>
      )}
    </Field>
  );
}

type LoadState = Pick<Loaded<unknown>, "data" | "error" | "loading" | "reload">;

/**
 * The panel a list lives in, with the load's error (and a retry) above it: a spinner on the first
 * load, then `empty` when there are no rows, else the children (the table, a pager).
 */
export function ListPanel({ label, loaded, what, isEmpty, empty, children }: { label: string; loaded: LoadState; what: string; isEmpty: boolean; empty: ReactNode; children: ReactNode }) {
  return (
    <>
      <ErrorAlert error={loaded.error} onRetry={loaded.reload} />
      <section className="panel flush" aria-label={label}>
        {loaded.loading && !loaded.data ? <Loading what={what} /> : isEmpty ? empty : children}
      </section>
    </>
  );
}

/**
 * The list page of a kind of resource (sources, destinations, connections…): the head with a
 * "New …" link to `${path}/new`, the table with rows that open `${path}/${id}`, and an empty state
 * that invites to create the first one.
 */
export function ResourceListPage<T extends { id: string }>({
  title,
  noun,
  plural = `${noun}s`,
  path,
  sub,
  loaded,
  rows,
  columns,
  emptyText,
  empty,
  filters,
}: {
  /** "Connections": the heading, and the label of the panel and the table. */
  title: string;
  /** "connection": in "New connection", "Create your first connection". */
  noun: string;
  /** "connections": in "No connections yet", "Loading connections". */
  plural?: string;
  /** "/connections": where the list lives; new and detail pages are below it. */
  path: string;
  sub: ReactNode;
  loaded: LoadState;
  rows: T[] | undefined;
  columns: Column<T>[];
  /** What the resource is for, under "No … yet". */
  emptyText: ReactNode;
  /** Replaces the empty state (e.g. when a filter is what leaves the list empty). */
  empty?: ReactNode;
  /** Shown between the head and the list. */
  filters?: ReactNode;
}) {
  const list = rows ?? [];
  const canWrite = useCan("write");
  const create = (text: string) =>
    canWrite ? (
      <Link to={`${path}/new`} className="btn primary">
        {text}
      </Link>
    ) : undefined;
  return (
    <>
      <PageHead title={title} sub={sub} actions={create(`New ${noun}`)} />
      {filters}
      <ListPanel
        label={title}
        loaded={loaded}
        what={`Loading ${plural}`}
        isEmpty={list.length === 0}
        empty={
          empty ?? (
            <Empty title={`No ${plural} yet`} action={create(`Create your first ${noun}`)}>
              {emptyText}
            </Empty>
          )
        }
      >
        <DataTable label={title} rows={list} rowKey={(r) => r.id} onRowClick={(r) => navigate(`${path}/${r.id}`)} columns={columns} />
      </ListPanel>
    </>
  );
}

/**
 * Deleting the resource a page shows, after confirmation: DELETE `${path}/${id}`, a toast, back to
 * the list at `path`. ask() opens the dialog; spread dialog into a <ConfirmDialog>.
 */
export function useDeleteResource(path: string, noun: string, resource: { id: string; name: string } | null) {
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  const onConfirm = async () => {
    if (!resource) return;
    await run(async () => {
      await api.del(`${path}/${encodeURIComponent(resource.id)}`);
      toast(`${noun} “${resource.name}” deleted`);
      navigate(path);
    });
  };
  return { ask: () => setOpen(true), dialog: { open, busy, error, onConfirm, onCancel: () => setOpen(false) } };
}

import { useRef, useState, type FormEvent } from "react";
import { api, ApiError } from "../api";
import { StatusBadge } from "../components/badges";
import { CopyField } from "../components/copy";
import { DetailActions } from "../components/detailActions";
import { ConfirmDialog } from "../components/dialogs";
import { Field, FormActions } from "../components/forms";
import { ErrorAlert, PageHead, PageLoading } from "../components/layout";
import { Time } from "../components/time";
import { toast } from "../components/toasts";
import { num, plural, prettyJson } from "../format";
import { useAction, useLoad, useSubmit } from "../hooks";
import { checkJson } from "../json";
import { JsonField } from "../jsonField";
import { ResourceListPage } from "../resources";
import { Link, navigate, useLocation } from "../router";
import { SchemaRefusal, violations, type Refusal } from "../schemaRefusal";
import type { EventType, Source, Topic } from "../types";
import { WriteForm } from "../components/writeForm";
import { Can } from "../can";

const SCHEMA_PLACEHOLDER = '{\n  "type": "object",\n  "required": ["id"],\n  "properties": { "id": { "type": "string" } }\n}';

/** Each topic's own source (type topic) holds its events: their counts come from there. */
function useTopicSources() {
  return useLoad(() => api.get<{ sources: Source[] }>("/sources", { type: "topic" }), []);
}

// ---------------------------------------------------------------- list

export function TopicsPage() {
  const topics = useLoad(() => api.get<{ topics: Topic[] }>("/topics"), []);
  const sources = useTopicSources();
  const sourceOf = (t: Topic) => sources.data?.sources.find((s) => s.id === t.source_id);
  return (
    <ResourceListPage
      title="Topics"
      noun="topic"
      path="/topics"
      sub="Named channels your applications publish events to. A topic's events are stored on its own source and delivered through that source's connections, like received webhooks."
      emptyText="Create a topic, then publish to it with POST /v1/topics/{slug}/publish (or hookrelay topics publish). A JSON Schema on the topic refuses payloads that do not match."
      loaded={topics}
      rows={topics.data?.topics}
      columns={[
        {
          label: "Name",
          render: (t) => (
            <>
              <Link to={`/topics/${t.id}`}>{t.name}</Link>
              <div className="muted mono" style={{ fontSize: 12 }}>
                {t.slug}
              </div>
            </>
          ),
        },
        { label: "Status", render: (t) => <StatusBadge status={t.status} /> },
        { label: "Schema", render: (t) => (t.schema ? "JSON Schema" : <span className="muted">none</span>) },
        { label: "Events", className: "num", render: (t) => num(sourceOf(t)?.event_count) },
        { label: "Last event", hideNarrow: true, render: (t) => <Time iso={sourceOf(t)?.last_event_at} /> },
        { label: "Created", hideNarrow: true, render: (t) => <Time iso={t.created_at} /> },
      ]}
    />
  );
}

// ---------------------------------------------------------------- create

const topicFields = ["name", "slug", "description", "schema", "status"];

export function NewTopicPage() {
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [description, setDescription] = useState("");
  const [schema, setSchema] = useState("");
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();
  const nameRef = useRef<HTMLInputElement>(null);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    if (!name.trim()) errors.name = "Give the topic a name, e.g. “Order events”";
    const parsed = checkJson(schema, { object: true });
    if (!parsed.ok) errors.schema = parsed.error;
    if (Object.keys(errors).length > 0) {
      setFieldErrors(errors);
      if (errors.name) nameRef.current?.focus();
      return;
    }
    const res = await submit(
      () =>
        api.post<{ topic: Topic }>("/topics", {
          name: name.trim(),
          ...(slug.trim() ? { slug: slug.trim() } : {}),
          ...(description.trim() ? { description: description.trim() } : {}),
          ...(parsed.ok && !parsed.empty ? { schema: parsed.value } : {}),
        }),
      topicFields,
    );
    if (res) {
      toast(`Topic “${res.topic.name}” created`);
      navigate(`/topics/${res.topic.id}?created=1`);
    }
  };

  return (
    <>
      <PageHead title="New topic" sub={<Link to="/topics">← All topics</Link>} />
      <WriteForm className="panel form" onSubmit={onSubmit} aria-label="New topic" noValidate>
        <ErrorAlert error={formError} />
        <div className="form-grid">
          <Field label="Name" error={fieldErrors.name}>
            {(p) => <input {...p} ref={nameRef} type="text" name="name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
          </Field>
          <Field label="Slug (optional)" error={fieldErrors.slug} help="Used in the publish URL. Default: the name, URL-safe.">
            {(p) => <input {...p} type="text" name="slug" value={slug} onChange={(e) => setSlug(e.target.value)} placeholder={slugOf(name) || "order-events"} />}
          </Field>
        </div>
        <Field label="Description (optional)" error={fieldErrors.description}>
          {(p) => <input {...p} type="text" name="description" value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <JsonField
          label="JSON Schema (optional)"
          name="schema"
          object
          rows={10}
          value={schema}
          onChange={setSchema}
          error={fieldErrors.schema}
          placeholder={SCHEMA_PLACEHOLDER}
          help="Published payloads must match it (422 otherwise). Empty: any JSON is accepted."
        />
        <FormActions busy={busy} label="Create topic" busyLabel="Creating…" cancelTo="/topics" />
      </WriteForm>
    </>
  );
}

/** What the server derives from a name when no slug is given (shown as the placeholder). */
function slugOf(name: string) {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, "-")
    .replace(/^[-_.]+|-+$/g, "")
    .slice(0, 100);
}

// ---------------------------------------------------------------- detail

export function TopicDetailPage({ id }: { id: string }) {
  const { search } = useLocation();
  const topic = useLoad(() => api.get<{ topic: Topic }>(`/topics/${encodeURIComponent(id)}`), [id]);
  const t = topic.data?.topic;
  const source = useLoad(() => (t ? api.get<{ source: Source }>(`/sources/${encodeURIComponent(t.source_id)}`) : Promise.resolve(null)), [t?.source_id]);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const { busy, error: actionError, run } = useAction();
  const eventCount = source.data?.source.event_count;

  const setStatus = (status: "active" | "paused") =>
    run(async () => {
      const res = await api.patch<{ topic: Topic }>(`/topics/${encodeURIComponent(id)}`, { status });
      topic.setData(() => res);
      toast(status === "paused" ? "Topic paused" : "Topic resumed");
    });

  const remove = () =>
    run(async () => {
      await api.del(`/topics/${encodeURIComponent(id)}`);
      toast(`Topic “${t?.name}” deleted`);
      navigate("/topics");
    });

  if (!t) return <PageLoading title="Topic" sub={<Link to="/topics">← All topics</Link>} error={topic.error} onRetry={topic.reload} />;

  return (
    <>
      <PageHead
        title={
          <>
            {t.name} <StatusBadge status={t.status} />
          </>
        }
        sub={<Link to="/topics">← All topics</Link>}
        actions={<DetailActions moves={[t.status === "active" ? { label: "Pause", to: "paused" as const } : { label: "Resume", to: "active" as const }]} busy={busy} onMove={setStatus} onDelete={() => setConfirmDelete(true)} />}
      />
      <ErrorAlert error={confirmDelete ? null : actionError} />
      {search.get("created") ? (
        <div className="alert ok" role="status">
          Topic created. Publish a test event below, then <Link to={`/connections/new?source_id=${t.source_id}`}>connect its source</Link> to a destination to deliver its events.
        </div>
      ) : null}
      {t.status === "paused" ? <div className="alert warn">Paused: publishing is refused (409) until you resume the topic.</div> : null}

      <section className="panel" aria-label="Topic">
        <h2>Publishing</h2>
        <CopyField value={`${location.origin}/v1/topics/${t.slug}/publish`} label="Publish URL" />
        <p className="muted" style={{ margin: "6px 0 0", fontSize: 13 }}>
          <code>POST</code> with an API key (<code>x-api-key</code>) and <code>{'{"event_type": "…", "payload": {…}}'}</code>, or <code>hookrelay topics publish {t.slug} --data @payload.json</code>.
        </p>
        <dl className="kv" style={{ marginTop: 14 }}>
          <dt>Slug</dt>
          <dd className="mono">{t.slug}</dd>
          <dt>Events</dt>
          <dd>
            {num(eventCount)} · <Link to={`/events?source_id=${t.source_id}`}>view events</Link>
          </dd>
          <dt>Source</dt>
          <dd>
            <Link to={`/sources/${t.source_id}`} className="mono">
              {t.source_id}
            </Link>{" "}
            <span className="muted">(type topic: connect it to destinations, build collections from it)</span>
          </dd>
          <dt>Schema</dt>
          <dd>{t.schema ? "published payloads must match the JSON Schema below" : "none: any JSON is accepted"}</dd>
          <dt>Id</dt>
          <dd className="mono">{t.id}</dd>
        </dl>
      </section>

      <Can permission="write">
        <PublishPanel topic={t} onPublished={source.reload} />
      </Can>

      <TopicSettings key={t.updated_at} topic={t} onSaved={(updated) => topic.setData(() => ({ topic: updated }))} />

      <ConfirmDialog open={confirmDelete} title="Delete this topic?" confirmLabel="Delete topic" busy={busy} error={actionError} onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
        <p>
          <strong>{t.name}</strong> is deleted with its source and {eventCount === undefined ? "its stored events" : plural(eventCount, "stored event")}, their delivery history, the source's connections and every collection built
          from it; deliveries still queued or waiting for a retry are never sent. Applications publishing to <code>{t.slug}</code> get 404. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

// ---------------------------------------------------------------- publish a test event

function PublishPanel({ topic, onPublished }: { topic: Topic; onPublished: () => void }) {
  const eventTypes = useLoad(() => api.get<{ event_types: EventType[] }>("/event-types"), []);
  const [eventType, setEventType] = useState("");
  const [payload, setPayload] = useState('{\n  "id": "ord_1001",\n  "total": 4200\n}');
  const [published, setPublished] = useState<string | null>(null);
  const [rejected, setRejected] = useState<Refusal | null>(null);
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setPublished(null);
    setRejected(null);
    const parsed = checkJson(payload);
    if (!parsed.ok || parsed.empty) return setFieldErrors({ payload: parsed.ok ? "Write the JSON payload to publish" : parsed.error });
    const res = await submit(async () => {
      try {
        return await api.post<{ event_id: string }>(`/topics/${encodeURIComponent(topic.id)}/publish`, { payload: parsed.value, ...(eventType.trim() ? { event_type: eventType.trim() } : {}) });
      } catch (err) {
        // A schema refusal lists what is wrong with the payload: shown under it, not as one line.
        if (err instanceof ApiError && err.code === "schema_violation") {
          setRejected({ message: err.message, errors: violations(err) });
          return undefined;
        }
        throw err;
      }
    }, ["payload", "event_type"]);
    if (res) {
      setPublished(res.event_id);
      onPublished();
    }
  };

  return (
    <form className="panel form" onSubmit={onSubmit} aria-label="Publish a test event" noValidate>
      <h2>Publish a test event</h2>
      <p className="muted" style={{ margin: 0 }}>
        The payload is checked against the topic's schema (and the event type's, when it has one), stored as an event and delivered through the topic's connections.
      </p>
      <ErrorAlert error={formError} />
      <Field label="Event type (optional)" error={fieldErrors.event_type} help="Names an event type to check the payload against its schema too.">
        {(p) => <input {...p} type="text" list="publish-event-types" value={eventType} onChange={(e) => setEventType(e.target.value)} placeholder="order.created" />}
      </Field>
      <datalist id="publish-event-types">
        {eventTypes.data?.event_types.map((t) => (
          <option key={t.id} value={t.name} />
        ))}
      </datalist>
      <JsonField label="Payload" name="payload" rows={6} value={payload} onChange={setPayload} error={fieldErrors.payload} />
      <SchemaRefusal refusal={rejected} />
      {published ? (
        <div className="alert ok" role="status">
          Published event{" "}
          <Link to={`/events/${published}`} className="mono">
            {published}
          </Link>
          . <Link to={`/events?source_id=${topic.source_id}`}>All events of this topic</Link>
        </div>
      ) : null}
      <div className="btn-row">
        <button type="submit" className="btn primary" disabled={busy || topic.status === "paused"} title={topic.status === "paused" ? "Resume the topic to publish" : undefined}>
          {busy ? "Publishing…" : "Publish"}
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------- settings

function TopicSettings({ topic, onSaved }: { topic: Topic; onSaved: (t: Topic) => void }) {
  const initial = useRef({ name: topic.name, slug: topic.slug, description: topic.description ?? "", schema: prettyJson(topic.schema).text });
  const [f, setF] = useState(initial.current);
  const set = (k: keyof typeof f, v: string) => setF((o) => ({ ...o, [k]: v }));
  const { busy, fieldErrors, formError, submit, setFieldErrors } = useSubmit();

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const init = initial.current;
    const body: Record<string, unknown> = {};
    if (f.name !== init.name) body.name = f.name.trim();
    if (f.slug !== init.slug) body.slug = f.slug.trim();
    if (f.description !== init.description) body.description = f.description.trim() || null;
    if (f.schema !== init.schema) {
      const parsed = checkJson(f.schema, { object: true });
      if (!parsed.ok) return setFieldErrors({ schema: parsed.error });
      body.schema = parsed.empty ? null : parsed.value;
    }
    if (Object.keys(body).length === 0) return toast("Nothing changed");
    const res = await submit(() => api.patch<{ topic: Topic }>(`/topics/${encodeURIComponent(topic.id)}`, body), topicFields);
    if (res) {
      toast("Topic saved");
      onSaved(res.topic);
    }
  };

  return (
    <WriteForm className="panel form" onSubmit={onSubmit} aria-label="Topic settings" noValidate>
      <h2>Settings</h2>
      <ErrorAlert error={formError} />
      <div className="form-grid">
        <Field label="Name" error={fieldErrors.name}>
          {(p) => <input {...p} type="text" value={f.name} onChange={(e) => set("name", e.target.value)} />}
        </Field>
        <Field label="Slug" error={fieldErrors.slug} help="Changing it changes the publish URL.">
          {(p) => <input {...p} type="text" value={f.slug} onChange={(e) => set("slug", e.target.value)} />}
        </Field>
      </div>
      <Field label="Description" error={fieldErrors.description}>
        {(p) => <input {...p} type="text" value={f.description} onChange={(e) => set("description", e.target.value)} />}
      </Field>
      <JsonField label="JSON Schema" object rows={10} value={f.schema} onChange={(v) => set("schema", v)} error={fieldErrors.schema} placeholder={SCHEMA_PLACEHOLDER} help="Empty: any JSON is accepted." />
      <FormActions busy={busy} label="Save topic" />
    </WriteForm>
  );
}

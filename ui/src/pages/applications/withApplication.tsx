/** The pages below an application (its endpoints, its messages) get the application first, and know where they stand. */
import type { ReactNode } from "react";
import { api } from "../../api";
import { PageLoading } from "../../components/layout";
import { useLoad } from "../../hooks";
import type { AppPlace } from "../../outbound";
import { Link } from "../../router";
import type { Application, Message } from "../../types";
import { EndpointPage } from "../endpoints/endpoint";
import { NewEndpointPage } from "../endpoints/form";
import { MessagePage } from "../messages/message";

export const appUrl = (id: string) => `/applications/${id}`;

/** Loads the application a page is about, then renders the page at its place. */
export function WithApplication({ id, title, children }: { id: string; title: string; children: (place: AppPlace, setApp: (a: Application) => void) => ReactNode }) {
  const loaded = useLoad(() => api.get<{ application: Application }>(`/applications/${encodeURIComponent(id)}`), [id]);
  const app = loaded.data?.application;
  if (!app) return <PageLoading title={title} sub={<Link to="/applications">← All applications</Link>} error={loaded.error} onRetry={loaded.reload} />;
  return <>{children({ app, base: appUrl(id), portal: false }, (a) => loaded.setData(() => ({ application: a })))}</>;
}

export function ApplicationEndpointPage({ id, endpointId }: { id: string; endpointId?: string }) {
  return <WithApplication id={id} title="Endpoint">{(place) => (endpointId ? <EndpointPage key={endpointId} place={place} id={endpointId} /> : <NewEndpointPage place={place} />)}</WithApplication>;
}

export function ApplicationMessagePage({ id, messageId }: { id: string; messageId: string }) {
  return <WithApplication id={id} title="Message">{(place) => <MessagePage key={messageId} place={place} id={messageId} />}</WithApplication>;
}

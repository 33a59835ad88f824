/**
 * The consumer portal (docs/outbound.md, "The portal"): the page a portal
 * link opens, `/portal#token=hrp_…`, for the people behind one application.
 * It needs no admin login and shows no admin navigation: that application's
 * endpoints and messages only, through the same pages the admin UI uses.
 *
 * The token travels in the URL fragment, which browsers send to no server.
 * The page takes it out of the address bar, keeps it in this tab's
 * sessionStorage (so a reload works and nothing outlives the tab), and sends
 * it as `Authorization: Bearer`, never in a URL.
 */
import { useEffect, useState } from "react";
import { api, ApiError, errorMessage, setBearerToken, setUnauthorizedHandler } from "../api";
import { Empty } from "../components/layout";
import { Tabs } from "../components/tabs";
import { Toasts } from "../components/toasts";
import { fullTime, timeAgo } from "../format";
import type { AppPlace } from "../outbound";
import { Link, match, navigate, useLocation } from "../router";
import type { PortalSession } from "../types";
import { EndpointPage } from "./endpoints/endpoint";
import { NewEndpointPage } from "./endpoints/form";
import { EndpointsPanel } from "./endpoints/list";
import { MessagePage } from "./messages/message";
import { MessagesPanel } from "./messages/list";

const BASE = "/portal";
const STORE = "hookrelay.portal";

export const isPortalPath = (path: string) => path === BASE || path.startsWith(`${BASE}/`);

/** The link's token: from the fragment (then removed from the address bar), else the one this tab kept. */
function takeToken(): string | null {
  const m = /[#&]token=([^&]+)/.exec(location.hash);
  if (m) {
    const token = decodeURIComponent(m[1]!);
    remember(token);
    history.replaceState(history.state, "", location.pathname + location.search);
    return token;
  }
  try {
    return sessionStorage.getItem(STORE);
  } catch {
    return null;
  }
}

function remember(token: string | null) {
  try {
    if (token) sessionStorage.setItem(STORE, token);
    else sessionStorage.removeItem(STORE);
  } catch {
    // Storage blocked: the portal works until the tab is reloaded.
  }
}

type State = { kind: "loading" } | { kind: "no-token" } | { kind: "ended"; why: string } | { kind: "error"; message: string } | { kind: "in"; session: PortalSession };

const EXPIRED = "This portal link is invalid or has expired.";

export function PortalApp() {
  const [state, setState] = useState<State>({ kind: "loading" });
  // A link pasted into a tab already on /portal changes only the fragment: no page load, so start again here.
  const [opened, setOpened] = useState(0);
  useEffect(() => {
    const onHash = () => {
      if (/[#&]token=/.test(location.hash)) setOpened((n) => n + 1);
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    setState({ kind: "loading" });
    const token = takeToken();
    if (!token) return setState({ kind: "no-token" });
    setBearerToken(token);
    const end = (why: string) => {
      remember(null);
      setBearerToken(null);
      setState({ kind: "ended", why });
    };
    // Any 401 later on (the link ran out while the page was open) ends the portal session.
    setUnauthorizedHandler(() => end(EXPIRED));
    let stale = false;
    api
      .get<PortalSession>("/portal/session", undefined, { quiet401: true })
      .then((session) => stale || setState({ kind: "in", session }))
      .catch((e) => {
        if (stale) return;
        if (e instanceof ApiError && e.status === 401) end(EXPIRED);
        else if (e instanceof ApiError && e.status === 404) end("The application this link was made for no longer exists.");
        else setState({ kind: "error", message: errorMessage(e) });
      });
    return () => {
      stale = true;
    };
  }, [opened]);

  // The link's end is known: close the portal then, without waiting for a refused request.
  const expiresAt = state.kind === "in" ? Date.parse(state.session.expires_at) : null;
  useEffect(() => {
    if (expiresAt === null) return;
    const t = setTimeout(
      () => {
        remember(null);
        setBearerToken(null);
        setState({ kind: "ended", why: "This portal link has expired." });
      },
      Math.max(0, Math.min(expiresAt - Date.now(), 2 ** 31 - 1)),
    );
    return () => clearTimeout(t);
  }, [expiresAt]);

  useEffect(() => {
    document.title = state.kind === "in" ? `Webhooks · ${state.session.application.name}` : "Webhooks portal";
  }, [state]);

  if (state.kind === "loading") return <div className="spinner">Opening the portal…</div>;
  if (state.kind === "in") return <PortalShell session={state.session} />;
  return (
    <main className="login-wrap">
      <div className="panel portal-message" role="alert">
        <h1>{state.kind === "error" ? "The portal could not be opened" : state.kind === "no-token" ? "This page needs a portal link" : "This portal link no longer works"}</h1>
        <p>
          {state.kind === "error"
            ? state.message
            : state.kind === "no-token"
              ? "Open the complete link you were given (it ends with #token=…)."
              : state.why}
        </p>
        {state.kind === "error" ? null : <p className="muted">Ask whoever sent you the link for a new one. Links last a limited time, and each one is for one application only.</p>}
      </div>
    </main>
  );
}

function PortalShell({ session }: { session: PortalSession }) {
  const { path } = useLocation();
  const place: AppPlace = { app: session.application, base: BASE, portal: true };
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(t);
  }, []);

  let page;
  let tab: "endpoints" | "messages" | null = null;
  let p: Record<string, string> | null;
  if (path === BASE || path === `${BASE}/`) tab = "endpoints";
  else if (path === `${BASE}/messages`) tab = "messages";
  if (tab === "endpoints") page = <EndpointsPanel place={place} />;
  else if (tab === "messages") page = <MessagesPanel place={place} />;
  else if (path === `${BASE}/endpoints/new`) page = <NewEndpointPage place={place} />;
  else if ((p = match(`${BASE}/endpoints/:id`, path))) page = <EndpointPage key={p.id} place={place} id={p.id!} />;
  else if ((p = match(`${BASE}/messages/:id`, path))) page = <MessagePage key={p.id} place={place} id={p.id!} />;
  else page = <Empty title="Page not found" action={<Link to={BASE} className="btn">Back to your endpoints</Link>} />;

  return (
    <div className="portal">
      <header className="portal-head">
        <div>
          <div className="muted portal-kicker">Webhooks</div>
          <div className="portal-app">{session.application.name}</div>
        </div>
        <div className="muted portal-expiry" title={fullTime(session.expires_at)} data-testid="portal-expiry">
          This link expires {timeAgo(session.expires_at)}
        </div>
      </header>
      <main className="portal-main" id="main">
        {tab ? (
          <>
            <p className="muted" style={{ marginTop: 0 }}>
              The URLs that receive {session.application.name}'s webhooks, and every message sent to them with each delivery attempt.
            </p>
            <Tabs
              label="Portal"
              tabs={[
                { id: "endpoints", label: "Endpoints" },
                { id: "messages", label: "Messages" },
              ]}
              value={tab}
              onChange={(t) => navigate(t === "endpoints" ? BASE : `${BASE}/messages`)}
            />
          </>
        ) : null}
        {page}
      </main>
      <Toasts />
    </div>
  );
}

/** The shell: session check, login, sidebar with every area, routes. */
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import { api, ApiError, errorMessage, setUnauthorizedHandler } from "./api";
import { ErrorAlert } from "./components/layout";
import { Toasts } from "./components/toasts";
import { shortId } from "./format";
import { Icon } from "./icons";
import { Link, match, navigate, useLocation } from "./router";
import { EnvSwitcher } from "./components/envSwitcher";
import { OrgSwitcher } from "./components/orgSwitcher";
import type { Area } from "./areas";
import { SidebarNav } from "./components/sidebarNav";
import { EnvironmentsPage } from "./pages/Environments";
import { AcceptInvitePage } from "./pages/AcceptInvite";
import { MembersPage } from "./pages/members/list";
import { SessionContext, sessionHinted, setSessionHint, type Me } from "./session";
import { ApiKeysPage } from "./pages/ApiKeys";
import { AuditLogPage } from "./pages/AuditLog";
import { ApplicationPage } from "./pages/applications/detail";
import { ApplicationMessagePage } from "./pages/applications/withApplication";
import { ApplicationEndpointPage } from "./pages/applications/withApplication";
import { NewApplicationPage } from "./pages/applications/form";
import { ApplicationsPage } from "./pages/applications/list";
import { CollectionDetailPage } from "./pages/collections/detail";
import { NewCollectionPage } from "./pages/collections/form";
import { CollectionsPage } from "./pages/collections/list";
import { RecordPage } from "./pages/CollectionRecord";
import { EventTypeEditPage, EventTypesPage } from "./pages/EventTypes";
import { NewTopicPage, TopicDetailPage, TopicsPage } from "./pages/Topics";
import { AttemptsPage } from "./pages/Attempts";
import { AlertRuleDetailPage } from "./pages/alertRules/detail";
import { NewAlertRulePage } from "./pages/alertRules/form";
import { AlertRulesPage } from "./pages/alertRules/list";
import { IssueDetailPage, IssuesPage } from "./pages/Issues";
import { ChannelDetailPage } from "./pages/notificationChannels/detail";
import { NewChannelPage } from "./pages/notificationChannels/form";
import { NotificationChannelsPage } from "./pages/notificationChannels/list";
import { ConnectionEditPage, ConnectionsPage } from "./pages/Connections";
import { DashboardPage } from "./pages/Dashboard";
import { DestinationEditPage, DestinationsPage } from "./pages/Destinations";
import { EventDetailPage } from "./pages/events/detail";
import { EventsPage } from "./pages/events/list";
import { ReplayPage } from "./pages/Replay";
import { SourceDetailPage } from "./pages/sources/detail";
import { NewSourcePage } from "./pages/sources/new";
import { SourcesPage } from "./pages/sources/list";
import { LoginPage } from "./pages/Login";
import { NotFoundPage } from "./pages/NotFound";
import { ProfilePage } from "./pages/Profile";

/**
 * The sidebar, data-driven: one line per page, under its group's heading
 * (ui/src/areas.ts, ui/src/components/sidebarNav.tsx). `minRole` hides a link from weaker
 * roles, `instanceOwner` shows it only to the instance's owner.
 */
export const areas: Area[] = [
  { path: "/", label: "Dashboard", group: "Watching", icon: "dashboard" },
  { path: "/events", label: "Events", group: "Watching", icon: "events" },
  { path: "/attempts", label: "Delivery attempts", group: "Watching", icon: "attempts" },
  { path: "/issues", label: "Issues", group: "Watching", icon: "issues" },
  { path: "/replay", label: "Replay", group: "Watching", icon: "replay", minRole: "developer" },
  { path: "/alert-rules", label: "Alert rules", group: "Watching", icon: "alerts" },
  { path: "/notification-channels", label: "Channels", group: "Watching", icon: "channels" },
  { path: "/sources", label: "Sources", group: "Receiving", icon: "sources" },
  { path: "/connections", label: "Connections", group: "Receiving", icon: "connections" },
  { path: "/destinations", label: "Destinations", group: "Receiving", icon: "destinations" },
  { path: "/topics", label: "Topics", group: "Receiving", icon: "topics" },
  { path: "/collections", label: "Collections", group: "Receiving", icon: "collections" },
  { path: "/applications", label: "Applications", group: "Sending", icon: "applications" },
  { path: "/event-types", label: "Event types", group: "Sending", icon: "eventTypes" },
  { path: "/api-keys", label: "API keys", group: "Settings", icon: "keys" },
  { path: "/environments", label: "Environments", group: "Settings", icon: "environments" },
  { path: "/members", label: "Members", group: "Settings", icon: "members" },
  { path: "/audit-log", label: "Audit log", group: "Settings", icon: "audit", minRole: "admin" },
];

interface Route {
  pattern: string;
  title: string;
  render: (params: Record<string, string>) => ReactNode;
}

// Fixed paths (".../new") before patterns (".../:id"): the first match wins.
const routes: Route[] = [
  { pattern: "/", title: "Dashboard", render: () => <DashboardPage /> },
  { pattern: "/sources", title: "Sources", render: () => <SourcesPage /> },
  { pattern: "/sources/new", title: "New source", render: () => <NewSourcePage /> },
  { pattern: "/sources/:id", title: "Source", render: (p) => <SourceDetailPage key={p.id} id={p.id!} /> },
  { pattern: "/events", title: "Events", render: () => <EventsPage /> },
  { pattern: "/events/:id", title: "Event", render: (p) => <EventDetailPage key={p.id} id={p.id!} /> },
  { pattern: "/destinations", title: "Destinations", render: () => <DestinationsPage /> },
  { pattern: "/destinations/new", title: "New destination", render: () => <DestinationEditPage /> },
  { pattern: "/destinations/:id", title: "Destination", render: (p) => <DestinationEditPage key={p.id} id={p.id!} /> },
  { pattern: "/connections", title: "Connections", render: () => <ConnectionsPage /> },
  { pattern: "/connections/new", title: "New connection", render: () => <ConnectionEditPage /> },
  { pattern: "/connections/:id", title: "Connection", render: (p) => <ConnectionEditPage key={p.id} id={p.id!} /> },
  { pattern: "/topics", title: "Topics", render: () => <TopicsPage /> },
  { pattern: "/topics/new", title: "New topic", render: () => <NewTopicPage /> },
  { pattern: "/topics/:id", title: "Topic", render: (p) => <TopicDetailPage key={p.id} id={p.id!} /> },
  { pattern: "/event-types", title: "Event types", render: () => <EventTypesPage /> },
  { pattern: "/event-types/new", title: "New event type", render: () => <EventTypeEditPage /> },
  { pattern: "/event-types/:id", title: "Event type", render: (p) => <EventTypeEditPage key={p.id} id={p.id!} /> },
  { pattern: "/collections", title: "Collections", render: () => <CollectionsPage /> },
  { pattern: "/collections/new", title: "New collection", render: () => <NewCollectionPage /> },
  { pattern: "/collections/:id", title: "Collection", render: (p) => <CollectionDetailPage key={p.id} id={p.id!} /> },
  { pattern: "/collections/:id/records/:key", title: "Record", render: (p) => <RecordPage key={`${p.id}/${p.key}`} collectionId={p.id!} recordKey={p.key!} /> },
  { pattern: "/applications", title: "Applications", render: () => <ApplicationsPage /> },
  { pattern: "/applications/new", title: "New application", render: () => <NewApplicationPage /> },
  { pattern: "/applications/:id", title: "Application", render: (p) => <ApplicationPage key={p.id} id={p.id!} tab="endpoints" /> },
  { pattern: "/applications/:id/messages", title: "Application messages", render: (p) => <ApplicationPage key={p.id} id={p.id!} tab="messages" /> },
  { pattern: "/applications/:id/settings", title: "Application settings", render: (p) => <ApplicationPage key={p.id} id={p.id!} tab="settings" /> },
  { pattern: "/applications/:id/endpoints/new", title: "New endpoint", render: (p) => <ApplicationEndpointPage key={p.id} id={p.id!} /> },
  { pattern: "/applications/:id/endpoints/:endpointId", title: "Endpoint", render: (p) => <ApplicationEndpointPage key={`${p.id}/${p.endpointId}`} id={p.id!} endpointId={p.endpointId!} /> },
  { pattern: "/applications/:id/messages/:messageId", title: "Message", render: (p) => <ApplicationMessagePage key={`${p.id}/${p.messageId}`} id={p.id!} messageId={p.messageId!} /> },
  { pattern: "/attempts", title: "Delivery attempts", render: () => <AttemptsPage /> },
  { pattern: "/replay", title: "Replay", render: () => <ReplayPage /> },
  { pattern: "/issues", title: "Issues", render: () => <IssuesPage /> },
  { pattern: "/issues/:id", title: "Issue", render: (p) => <IssueDetailPage key={p.id} id={p.id!} /> },
  { pattern: "/alert-rules", title: "Alert rules", render: () => <AlertRulesPage /> },
  { pattern: "/alert-rules/new", title: "New alert rule", render: () => <NewAlertRulePage /> },
  { pattern: "/alert-rules/:id", title: "Alert rule", render: (p) => <AlertRuleDetailPage key={p.id} id={p.id!} /> },
  { pattern: "/notification-channels", title: "Notification channels", render: () => <NotificationChannelsPage /> },
  { pattern: "/notification-channels/new", title: "New notification channel", render: () => <NewChannelPage /> },
  { pattern: "/notification-channels/:id", title: "Notification channel", render: (p) => <ChannelDetailPage key={p.id} id={p.id!} /> },
  { pattern: "/api-keys", title: "API keys", render: () => <ApiKeysPage /> },
  { pattern: "/environments", title: "Environments", render: () => <EnvironmentsPage /> },
  { pattern: "/profile", title: "Profile", render: () => <ProfilePage /> },
  { pattern: "/members", title: "Members", render: () => <MembersPage /> },
  { pattern: "/audit-log", title: "Audit log", render: () => <AuditLogPage /> },
];

function resolve(path: string): { route: Route | null; params: Record<string, string> } {
  for (const route of routes) {
    const params = match(route.pattern, path);
    if (params) return { route, params };
  }
  return { route: null, params: {} };
}

type AuthState = { kind: "loading" } | { kind: "anonymous" } | { kind: "error"; message: string } | { kind: "in"; me: Me };

export function App() {
  const { path } = useLocation();
  // Without a hint of a session there is nothing to check: straight to the login form, no request.
  const [auth, setAuth] = useState<AuthState>(() => (sessionHinted() ? { kind: "loading" } : { kind: "anonymous" }));

  const loadMe = useCallback(async () => {
    try {
      const me = await api.get<Me>("/auth/me", undefined, { quiet401: true });
      setSessionHint(true);
      setAuth({ kind: "in", me });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        setSessionHint(false);
        setAuth({ kind: "anonymous" });
      } else setAuth({ kind: "error", message: errorMessage(e) });
    }
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setSessionHint(false);
      setAuth({ kind: "anonymous" });
    });
    if (sessionHinted()) void loadMe();
  }, [loadMe]);

  const logout = useCallback(async () => {
    // First, so a reload while the request runs does not ask for a session that is going away.
    setSessionHint(false);
    try {
      await api.post("/auth/logout", {}, { quiet401: true });
    } catch {
      // The session is gone either way.
    }
    setAuth({ kind: "anonymous" });
  }, []);

  // An invite (or password reset) link opens its page whoever is signed in, or nobody.
  if (path === "/accept")
    return (
      <AcceptInvitePage
        onAccepted={() => {
          setSessionHint(true);
          navigate("/", { replace: true });
          void loadMe();
        }}
      />
    );
  if (auth.kind === "loading") return <div className="spinner">Loading hookrelay…</div>;
  if (auth.kind === "error")
    return (
      <main className="login-wrap">
        <div className="login">
          <ErrorAlert error={auth.message} onRetry={loadMe} />
        </div>
      </main>
    );
  if (auth.kind === "anonymous")
    return (
      <>
        <LoginPage onLoggedIn={loadMe} />
        <Toasts />
      </>
    );
  return (
    <SessionContext.Provider value={{ me: auth.me, logout }}>
      <Shell me={auth.me} onLogout={logout} />
      <Toasts />
    </SessionContext.Provider>
  );
}

function Shell({ me, onLogout }: { me: Me; onLogout: () => void }) {
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const mainRef = useRef<HTMLElement>(null);
  const { route, params } = resolve(path);

  useEffect(() => {
    document.title = `${route?.title ?? "Not found"} · hookrelay`;
  }, [route]);

  // Close the phone menu on navigation.
  useEffect(() => setMenuOpen(false), [path]);

  const envLabel = me.env_name || shortId(me.env_id);

  const nav = (
    <SidebarNav
      areas={areas}
      me={me}
      path={path}
      onChoose={() => {
        setMenuOpen(false);
        // Keyboard users land on the page they chose, not back at the top of the sidebar.
        setTimeout(() => mainRef.current?.focus({ preventScroll: true }), 0);
      }}
    />
  );

  return (
    <div className="shell" data-menu={menuOpen ? "open" : "closed"}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button type="button" className="btn ghost small" aria-label="Open menu" aria-expanded={menuOpen} aria-controls="sidebar" onClick={() => setMenuOpen((o) => !o)}>
          <Icon name="menu" />
        </button>
        <Link to="/" className="brand">
          <span className="brand-mark" aria-hidden="true">
            h
          </span>
          hookrelay
        </Link>
        <span className="badge info" title={`Environment ${me.env_id}`}>
          {envLabel}
        </span>
      </header>
      <button type="button" className="scrim" aria-label="Close menu" tabIndex={-1} onClick={() => setMenuOpen(false)} />
      <aside className="sidebar" id="sidebar">
        <Link to="/" className="brand">
          <span className="brand-mark" aria-hidden="true">
            h
          </span>
          hookrelay
        </Link>
        <div className="env-badge" title={`Organization ${me.org_name} (${me.org_id}), environment ${me.env_name} (${me.env_id})`} data-testid="environment">
          Environment: <strong>{envLabel}</strong>
        </div>
        <OrgSwitcher me={me} />
        <EnvSwitcher me={me} />
        {nav}
        <div className="sidebar-foot">
          {me.user ? (
            <Link to="/profile" className="user-email" title={`${me.user.email}: your profile (password, sessions)`} aria-current={path === "/profile" ? "page" : undefined}>
              {me.user.email}
            </Link>
          ) : (
            <div className="user-email">API key</div>
          )}
          <button type="button" className="btn small" onClick={onLogout}>
            <Icon name="logout" size={16} />
            Log out
          </button>
        </div>
      </aside>
      <main className="main" id="main" ref={mainRef} tabIndex={-1} style={{ outline: "none" }}>
        {route ? route.render(params) : <NotFoundPage />}
      </main>
    </div>
  );
}

export { navigate };

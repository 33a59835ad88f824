/**
 * The sidebar's links, grouped under headings (docs/admin-ui.md, "Sidebar"):
 * the pages are data (ui/src/areas.ts), and a link the caller's role cannot
 * use is not shown.
 */
import { useEffect, useRef } from "react";
import { areaGroups, currentArea, visibleAreas, type Area } from "../areas";
import { Icon } from "../icons";
import { Link } from "../router";
import type { Me } from "../session";

export function SidebarNav({ areas, me, path, onChoose }: { areas: readonly Area[]; me: Me; path: string; onChoose: () => void }) {
  const shown = visibleAreas(areas, me);
  const current = currentArea(shown, path);
  const navRef = useRef<HTMLElement>(null);

  // The sidebar scrolls when its links outgrow the window: keep the current page's link in view,
  // moving the sidebar alone (scrollIntoView would move the page too, and the phone menu is off-screen).
  useEffect(() => {
    const link = navRef.current?.querySelector('[aria-current="page"]');
    const sidebar = navRef.current?.closest(".sidebar");
    if (!link || !sidebar) return;
    const l = link.getBoundingClientRect();
    const s = sidebar.getBoundingClientRect();
    // The foot (Log out) stays at the sidebar's bottom edge: a link behind it is not in view.
    const bottom = Math.min(s.bottom, sidebar.querySelector(".sidebar-foot")?.getBoundingClientRect().top ?? s.bottom);
    if (l.top < s.top) sidebar.scrollTop -= s.top - l.top;
    else if (l.bottom > bottom) sidebar.scrollTop += l.bottom - bottom;
  }, [current?.path]);

  return (
    <nav className="nav" aria-label="Main" ref={navRef}>
      {areaGroups.map((group) => {
        const links = shown.filter((a) => a.group === group);
        if (links.length === 0) return null;
        const headingId = `nav-group-${group.toLowerCase()}`;
        return (
          <section key={group} className="nav-group" aria-labelledby={headingId}>
            <h2 id={headingId} className="nav-heading">
              {group}
            </h2>
            {links.map((a) => (
              <Link key={a.path} to={a.path} aria-current={current?.path === a.path ? "page" : undefined} onClick={onChoose}>
                {a.icon ? <Icon name={a.icon} /> : <span className="nav-dot" aria-hidden="true" />}
                {a.label}
              </Link>
            ))}
          </section>
        );
      })}
    </nav>
  );
}

/**
 * The sidebar's links, grouped under headings (docs/admin-ui.md, "Sidebar"):
 * each page is one line of data, `{ path, label, group }`, so adding a page
 * adds a line, and a link the caller's role cannot use is not shown.
 */
import { useEffect, useRef } from "react";
import { rank, type Role } from "../../../src/contracts/roles";
import { Icon } from "../icons";
import { Link } from "../router";
import type { Me } from "../session";

/** The sidebar's groups, in the order they are shown. */
export const areaGroups = ["Watching", "Receiving", "Sending", "Settings"] as const;
export type AreaGroup = (typeof areaGroups)[number];

export interface Area {
  path: string;
  label: string;
  group: AreaGroup;
  /** A name in ui/src/icons.tsx; without one the link shows a plain dot. */
  icon?: string;
  /** The weakest role that sees the link (e.g. "admin" for the audit log); everyone when absent. */
  minRole?: Role;
  /** Only for the instance's owner (whole-instance areas: organizations, backups). */
  instanceOwner?: boolean;
}

/** The links this caller may follow: weaker roles and non-owners of the instance do not see the others. */
export function visibleAreas(areas: readonly Area[], me: Pick<Me, "role" | "instance_owner">): Area[] {
  return areas.filter((a) => (!a.minRole || rank(me.role) >= rank(a.minRole)) && (!a.instanceOwner || me.instance_owner));
}

/** The area a path belongs to: the longest path that is it or its parent ("/" only for itself). */
export function currentArea(areas: readonly Area[], path: string): Area | undefined {
  const matching = areas.filter((a) => (a.path === "/" ? path === "/" : path === a.path || path.startsWith(a.path + "/")));
  return matching.sort((a, b) => b.path.length - a.path.length)[0];
}

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

/**
 * The sidebar's pages as data (docs/admin-ui.md, "Sidebar"): each page is one
 * line, `{ path, label, group }`, so adding a page adds a line; which links a
 * caller sees and which one is the current page.
 */
import { rank, type Role } from "../../src/contracts/roles";
import type { Me } from "./session";

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

/**
 * The sidebar's data (ui/src/areas.ts, docs/admin-ui.md
 * "Sidebar"): which links a caller sees, and which one is the current page.
 */
import { describe, expect, it } from "vitest";
import { currentArea, visibleAreas, type Area } from "../../ui/src/areas";

const areas: Area[] = [
  { path: "/", label: "Dashboard", group: "Watching" },
  { path: "/replay", label: "Replay", group: "Watching", minRole: "developer" },
  { path: "/applications", label: "Applications", group: "Sending" },
  { path: "/applications/archive", label: "Archive", group: "Sending" },
  { path: "/members", label: "Members", group: "Settings", minRole: "admin" },
  { path: "/organizations", label: "Organizations", group: "Settings", instanceOwner: true },
];
const labels = (list: Area[]) => list.map((a) => a.label);

describe("visibleAreas", () => {
  it("hides a link from roles weaker than its minRole", () => {
    expect(labels(visibleAreas(areas, { role: "viewer", instance_owner: false }))).toEqual(["Dashboard", "Applications", "Archive"]);
    expect(labels(visibleAreas(areas, { role: "developer", instance_owner: false }))).toEqual(["Dashboard", "Replay", "Applications", "Archive"]);
    expect(labels(visibleAreas(areas, { role: "admin", instance_owner: false }))).toContain("Members");
    expect(labels(visibleAreas(areas, { role: "owner", instance_owner: false }))).not.toContain("Organizations");
  });

  it("shows an instance-wide link to the instance's owner only, whatever the role in the organization", () => {
    expect(labels(visibleAreas(areas, { role: "viewer", instance_owner: true }))).toContain("Organizations");
  });
});

describe("currentArea", () => {
  it("is the longest path the address is or starts with; the dashboard only for itself", () => {
    expect(currentArea(areas, "/")?.label).toBe("Dashboard");
    expect(currentArea(areas, "/applications/app_1/messages")?.label).toBe("Applications");
    expect(currentArea(areas, "/applications/archive")?.label).toBe("Archive");
    expect(currentArea(areas, "/applications-old")).toBeUndefined();
    expect(currentArea(areas, "/nowhere")).toBeUndefined();
  });
});

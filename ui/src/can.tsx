/**
 * What the caller may do here, so a page shows only the buttons and forms its
 * role can use (docs/teams.md, "Who may do what"; docs/admin-ui.md, "Roles").
 * The server refuses anyway (src/api/middleware/auth.ts); this spares a
 * viewer a 403 behind every button.
 */
import { useContext, type ReactNode } from "react";
import { can, type Permission, type Role } from "../../src/contracts/roles";
import { SessionContext } from "./session";

/**
 * The caller's role in the current organization. Outside the logged-in shell
 * the page is the consumer portal, whose link acts as a developer within its
 * one application (src/api/middleware/portal.ts).
 */
function useRole(): Role {
  return useContext(SessionContext)?.me.role ?? "developer";
}

/** Whether the caller's role allows `permission` (src/contracts/roles.ts). */
export function useCan(permission: Permission): boolean {
  return can(useRole(), permission);
}

/** Whether the caller acts for the instance's owner: whole-instance areas (backups, the cluster, organizations). */
export function useInstanceOwner(): boolean {
  return useContext(SessionContext)?.me.instance_owner ?? false;
}

/** Its children only for a role that allows `permission`; else `otherwise` (nothing by default). */
export function Can({ permission, children, otherwise = null }: { permission: Permission; children: ReactNode; otherwise?: ReactNode }) {
  return <>{useCan(permission) ? children : otherwise}</>;
}

/** A line saying why a page offers no changes: the role, and whom to ask. */
export function ReadOnlyNote({ what = "change anything here" }: { what?: string }) {
  const role = useRole();
  return (
    <p className="alert info" role="note" data-testid="read-only-note">
      Your role here is <strong>{role}</strong>: you can look, but not {what}. An admin of the organization can give you a stronger role.
    </p>
  );
}

/** In place of a "Reveal secret" button for a role that sees secrets masked. */
export function SecretHidden() {
  return <p className="muted">Secrets are shown to developers and up; your role here sees them masked.</p>;
}

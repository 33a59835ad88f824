/**
 * The organization switcher beside the environment's: shown to a user of
 * more than one organization, or to the instance's owner (who also sees
 * those they are no member of, not to be chosen). Choosing one acts in it,
 * in the environment last used there, from then on (docs/teams.md).
 */
import { useEffect, useState } from "react";
import type { OrganizationDto } from "../../../src/contracts/organizations";
import { api, errorMessage, setEnvironment, setOrganization } from "../api";
import type { Me } from "../session";

export function OrgSwitcher({ me }: { me: Me }) {
  const [orgs, setOrgs] = useState<OrganizationDto[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    // An API key has one organization: nothing to list.
    if (!me.user) return;
    api.get<{ organizations: OrganizationDto[] }>("/organizations").then(
      (r) => setOrgs(r.organizations),
      () => setOrgs(null),
    );
  }, [me.user]);
  if (!orgs || (orgs.filter((o) => o.role !== null).length < 2 && !me.instance_owner)) return null;
  const choose = async (id: string) => {
    setOrganization(id);
    // The environment is the one last used in that organization: the current one's means nothing there.
    setEnvironment(null);
    try {
      // The server keeps the choice as the user's current organization, so the reload below acts in it too.
      await api.get("/auth/me");
      window.location.reload();
    } catch (e) {
      setOrganization(null);
      setError(errorMessage(e));
    }
  };
  return (
    <label className="env-switcher">
      <select aria-label="Organization" value={me.org_id} onChange={(e) => void choose(e.target.value)} data-testid="organization-switcher">
        {orgs.map((o) => (
          <option key={o.id} value={o.id} disabled={o.role === null}>
            {o.role === null ? `${o.name} (not a member)` : o.name}
          </option>
        ))}
      </select>
      {error && <span role="alert">{error}</span>}
    </label>
  );
}

/** The header's environment switcher: lists the organization's environments; choosing one acts in it from then on. */
import { useEffect, useState } from "react";
import type { EnvironmentDto } from "../../../src/contracts/environments";
import { api, errorMessage, setEnvironment } from "../api";
import type { Me } from "../session";

export function EnvSwitcher({ me }: { me: Me }) {
  const [envs, setEnvs] = useState<EnvironmentDto[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.get<{ environments: EnvironmentDto[] }>("/environments").then(
      (r) => setEnvs(r.environments),
      () => setEnvs(null),
    );
  }, []);
  // One environment: nothing to switch to (the sidebar names it).
  if (!envs || envs.length < 2) return null;
  const choose = async (id: string) => {
    setEnvironment(id);
    try {
      // The server keeps the choice as the user's last used, so the reload below acts in it too.
      await api.get("/auth/me");
      window.location.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <label className="env-switcher">
      <select aria-label="Environment" value={me.env_id} onChange={(e) => void choose(e.target.value)} data-testid="environment-switcher">
        {envs.map((e) => (
          <option key={e.id} value={e.id}>
            {e.name}
          </option>
        ))}
      </select>
      {error && <span role="alert">{error}</span>}
    </label>
  );
}

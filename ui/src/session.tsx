/** Who is logged in (GET /v1/auth/me), shared by the shell and pages. */
import { createContext, useContext } from "react";

export interface Me {
  user: { id: string; email: string } | null;
  org_id: string;
  env_id: string;
  /** Shown instead of the ids when the server sends them. */
  org_name?: string;
  env_name?: string;
}

export interface Session {
  me: Me;
  logout: () => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside the logged-in shell");
  return s;
}

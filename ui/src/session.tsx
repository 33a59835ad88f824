/** Who is logged in (GET /v1/auth/me), shared by the shell and pages. */
import { createContext, useContext } from "react";
import type { MeBody } from "../../src/contracts/apiKeys";

/** The names are shown; the ids stay in the tooltips. */
export type Me = MeBody;

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

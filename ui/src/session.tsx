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

/**
 * Whether this browser logged in and has not logged out since. The session
 * cookie is HttpOnly (scripts cannot see it), and asking GET /v1/auth/me
 * without one answers 401, which the browser logs as a console error on the
 * login page. So the app asks only when it has reason to think a session
 * exists; a stale hint costs one 401, then it is dropped.
 */
const HINT = "hookrelay.session";

export function sessionHinted(): boolean {
  try {
    return localStorage.getItem(HINT) === "1";
  } catch {
    // Storage blocked: ask the server every time, as before.
    return true;
  }
}

export function setSessionHint(on: boolean) {
  try {
    if (on) localStorage.setItem(HINT, "1");
    else localStorage.removeItem(HINT);
  } catch {
    // Nothing to remember it in.
  }
}

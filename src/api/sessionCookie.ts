import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import { SESSION_TTL_MS } from "../domain/sessions";
import { SESSION_COOKIE } from "./middleware/auth";

/** The one session cookie, whichever way the user signed in (password, one-time link, single sign-on). */
export function setSessionCookie(c: Context, token: string) {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "Lax",
    path: "/",
    secure: new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https",
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  });
}

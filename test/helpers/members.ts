import { call, type TestServer } from "./server";

/** The password every member made by these helpers sets when accepting their invite. */
export const MEMBER_PASSWORD = "a member's long password";

export interface Member {
  userId: string;
  email: string;
  /** Cookie + same-origin Origin for the member's own session requests. */
  session: Record<string, string>;
}

/** The token a one-time link carries in its fragment (/accept#token=…). */
export const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, "");

/** The cookie a response set, as request headers with the server's Origin. */
export function sessionFrom(server: TestServer, headers: Headers): Record<string, string> {
  return { cookie: headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), origin: server.url };
}

/**
 * A member of the caller's organization made the way people join: invited
 * through POST /v1/members by `by` (a session's headers or a key), then the
 * invite accepted, which signs them in.
 */
export async function joinAs(server: TestServer, by: { headers?: Record<string, string>; key?: string }, role: string, email = `${role}-${crypto.randomUUID().slice(0, 8)}@test.local`): Promise<Member> {
  const added = await call(server, "POST", "/v1/members", { ...by, body: { email, role } });
  if (added.status !== 201) throw new Error(`add member: ${added.status} ${JSON.stringify(added.body)}`);
  const accepted = await call(server, "POST", "/v1/auth/invites/accept", { body: { token: tokenOf(added.body.invite_url), password: MEMBER_PASSWORD, name: `The ${role}` } });
  if (accepted.status !== 200) throw new Error(`accept invite: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return { userId: added.body.member.user_id, email, session: sessionFrom(server, accepted.headers) };
}

/** An API key the member makes from their session. */
export async function keyOf(server: TestServer, member: Member, scopes: "*" | "read" = "*"): Promise<{ id: string; key: string }> {
  const res = await call(server, "POST", "/v1/auth/api-keys", { headers: member.session, body: { name: `key of ${member.email}`, scopes } });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, key: res.body.key };
}

/**
 * Removing or disabling a member cuts them off at once (docs/teams.md,
 * "Members and invites"): their API keys of the organization are revoked,
 * their sessions end, so the next request of either is a 401, and the live
 * streams they hold open close; another member's go on.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys, sessions } from "../../src/db/schema";
import { waitFor } from "../helpers/delivery";
import { joinAs, keyOf, MEMBER_PASSWORD, type Member } from "../helpers/members";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/** Generous: the machine is shared and busy. */
const ENDS_WITHIN_MS = 20_000;

let server: TestServer;
let owner: Record<string, string>;

useServer({}, (s) => ({ server } = s));
beforeAll(async () => {
  owner = await server.session();
});

interface OpenStream {
  ended: () => boolean;
  close: () => void;
}

/** Opens GET /v1/events/stream and reads it until the server ends it; resolves once `: connected` came. */
async function openStream(headers: Record<string, string>): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await server.request("/v1/events/stream", { headers, signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const state = { text: "", ended: false };
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (done || !value) break;
      state.text += decoder.decode(value, { stream: true });
    }
    state.ended = true;
  })();
  await waitFor(async () => state.text.includes(": connected"), { what: "the stream to open", timeoutMs: 20_000 });
  return { ended: () => state.ended, close: () => controller.abort() };
}

/** A member with a second session (another browser) and two keys: one cut-off must reach them all. */
async function memberWithCredentials(role: string) {
  const member = await joinAs(server, { headers: owner }, role);
  const login = await call(server, "POST", "/v1/auth/login", { body: { email: member.email, password: MEMBER_PASSWORD } });
  const secondSession = { cookie: login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), origin: server.url };
  const keys = [await keyOf(server, member), await keyOf(server, member, "read")];
  return { member, sessions: [member.session, secondSession], keys };
}

async function expectCutOff(m: { member: Member; sessions: Record<string, string>[]; keys: { id: string; key: string }[] }) {
  for (const s of m.sessions) expect((await call(server, "GET", "/v1/auth/me", { headers: s })).status).toBe(401);
  for (const k of m.keys) expect((await call(server, "GET", "/v1/auth/me", { key: k.key })).status).toBe(401);
  const stored = await server.deps.db.select({ revoked: apiKeys.revoked, revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.userId, m.member.userId));
  expect(stored).toEqual([
    { revoked: 1, revokedAt: expect.any(String) },
    { revoked: 1, revokedAt: expect.any(String) },
  ]);
  expect(await server.deps.db.select().from(sessions).where(eq(sessions.userId, m.member.userId))).toEqual([]);
}

describe.each([
  { how: "DELETE /v1/members/{user_id}", act: (userId: string) => call(server, "DELETE", `/v1/members/${userId}`, { headers: owner }) },
  { how: "PATCH /v1/members/{user_id} {disabled: true}", act: (userId: string) => call(server, "PATCH", `/v1/members/${userId}`, { headers: owner, body: { disabled: true } }) },
])("a member cut off by $how", ({ act }) => {
  it("loses every key and session at once: the next request of each is a 401, the rows say so", async () => {
    const m = await memberWithCredentials("developer");
    for (const s of m.sessions) expect((await call(server, "GET", "/v1/auth/me", { headers: s })).status).toBe(200);
    expect((await act(m.member.userId)).status).toBe(200);
    await expectCutOff(m);
  });

  it("has their open live streams closed (key and session); another member's stream goes on", async () => {
    const m = await memberWithCredentials("admin");
    const other = await memberWithCredentials("developer");
    const byKey = await openStream({ "x-api-key": m.keys[1]!.key });
    const bySession = await openStream(m.sessions[0]!);
    const bystander = await openStream({ "x-api-key": other.keys[0]!.key });
    expect((await act(m.member.userId)).status).toBe(200);
    await waitFor(async () => byKey.ended(), { what: "the key's stream to end", timeoutMs: ENDS_WITHIN_MS });
    await waitFor(async () => bySession.ended(), { what: "the session's stream to end", timeoutMs: ENDS_WITHIN_MS });
    expect(bystander.ended()).toBe(false);
    expect((await call(server, "GET", "/v1/auth/me", { key: other.keys[0]!.key })).status).toBe(200);
    bystander.close();
  });
});

describe("a re-enabled member", () => {
  it("signs in again, but the keys revoked by the disabling stay revoked", async () => {
    const m = await memberWithCredentials("developer");
    await call(server, "PATCH", `/v1/members/${m.member.userId}`, { headers: owner, body: { disabled: true } });
    expect((await call(server, "PATCH", `/v1/members/${m.member.userId}`, { headers: owner, body: { disabled: false } })).status).toBe(200);
    expect((await call(server, "POST", "/v1/auth/login", { body: { email: m.member.email, password: MEMBER_PASSWORD } })).status).toBe(200);
    for (const k of m.keys) expect((await call(server, "GET", "/v1/auth/me", { key: k.key })).status).toBe(401);
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import type { Role } from "../../src/contracts/roles";
import { createDestination } from "../helpers/delivery";
import { insertEvent, scopeOf, type TestScope } from "../helpers/rows";
import { joinAs, keyOf, type Member } from "../helpers/members";
import { call, type TestServer } from "../helpers/server";
import { useServer } from "../helpers/fixture";

/**
 * The role matrix (docs/teams.md, "Who may do what"): each kind of
 * operation, tried by a member of each role over HTTP, with their session
 * and with an API key they made; the table says what each role gets.
 */

let server: TestServer, key: string;
let scope: TestScope;
let ownerSession: Record<string, string>;
let ownerId: string;

useServer({}, (s) => ({ server, key } = s));

const ROLES = ["viewer", "developer", "admin", "owner"] as const satisfies readonly Role[];

interface Caller {
  role: Role;
  member: Member;
  key: string;
}
const callers = {} as Record<Role, Caller>;

/** What an operation sends; `prepare` makes what it acts on afresh for each try (with the bootstrap owner's key). */
interface Request {
  method: string;
  path: string;
  body?: unknown;
}
interface Operation {
  what: string;
  /** The status each role gets, viewer → owner. */
  expect: [viewer: number, developer: number, admin: number, owner: number];
  /** Whether an API key may try it (key management is a session's only: src/api/middleware/auth.ts requireSession). */
  keys: boolean;
  request: (caller: Caller) => Promise<Request>;
}

const unique = () => crypto.randomUUID().slice(0, 8);
let sourceId: string;
const freshSource = async () => (await call(server, "POST", "/v1/sources", { key, body: { name: `src ${unique()}` } })).body.source.id as string;
let appId: string;
let destinationId: string;

/** A developer of the organization whose keys the others try to see and revoke. */
let bystander: Member;

// prettier-ignore
const MATRIX: Operation[] = [
  //                                                       viewer developer admin owner
  { what: "read a resource",                     expect: [200,   200,      200,  200], keys: true,  request: async () => ({ method: "GET", path: `/v1/sources/${sourceId}` }) },
  { what: "list members",                        expect: [200,   200,      200,  200], keys: true,  request: async () => ({ method: "GET", path: "/v1/members" }) },
  { what: "read a secret",                       expect: [403,   200,      200,  200], keys: true,  request: async () => ({ method: "GET", path: `/v1/sources/${sourceId}/secret` }) },
  { what: "create a relay resource",             expect: [403,   201,      201,  201], keys: true,  request: async () => ({ method: "POST", path: "/v1/sources", body: { name: `made ${unique()}` } }) },
  { what: "update a relay resource",             expect: [403,   200,      200,  200], keys: true,  request: async () => ({ method: "PATCH", path: `/v1/sources/${sourceId}`, body: { description: `changed ${unique()}` } }) },
  { what: "delete a relay resource",             expect: [403,   200,      200,  200], keys: true,  request: async () => ({ method: "DELETE", path: `/v1/sources/${await freshSource()}` }) },
  { what: "retry an event",                      expect: [403,   200,      200,  200], keys: true,  request: async () => ({ method: "POST", path: `/v1/events/${await insertEvent(server, scope, sourceId, { body: "{}" })}/retry` }) },
  { what: "replay events",                       expect: [403,   202,      202,  202], keys: true,  request: async () => ({ method: "POST", path: "/v1/replay", body: { destination_id: destinationId, source_id: sourceId, from: "2000-01-01T00:00:00Z", to: "2000-01-02T00:00:00Z" } }) },
  { what: "send a message",                      expect: [403,   202,      202,  202], keys: true,  request: async () => ({ method: "POST", path: `/v1/applications/${appId}/messages`, body: { event_type: "order.created", payload: { n: 1 } } }) },
  { what: "create an API key for oneself",       expect: [403,   201,      201,  201], keys: false, request: async () => ({ method: "POST", path: "/v1/auth/api-keys", body: { name: `own ${unique()}` } }) },
  { what: "revoke another member's API key",     expect: [403,   403,      200,  200], keys: false, request: async () => ({ method: "DELETE", path: `/v1/auth/api-keys/${(await keyOf(server, bystander)).id}` }) },
  { what: "create an environment",               expect: [403,   403,      201,  201], keys: true,  request: async () => ({ method: "POST", path: "/v1/environments", body: { name: `env ${unique()}` } }) },
  { what: "rename an environment",               expect: [403,   403,      200,  200], keys: true,  request: async () => ({ method: "PATCH", path: `/v1/environments/${scope.envId}`, body: { name: "production" } }) },
  { what: "delete an environment",               expect: [403,   403,      204,  204], keys: false, request: async () => ({ method: "DELETE", path: `/v1/environments/${(await call(server, "POST", "/v1/environments", { key, body: { name: `gone ${unique()}` } })).body.environment.id}` }) },
  { what: "add a member",                        expect: [403,   403,      201,  201], keys: true,  request: async () => ({ method: "POST", path: "/v1/members", body: { email: `m-${unique()}@test.local`, role: "viewer" } }) },
  { what: "change a member below owner",         expect: [403,   403,      200,  200], keys: true,  request: async () => ({ method: "PATCH", path: `/v1/members/${bystander.userId}`, body: { role: "developer" } }) },
  { what: "change an owner",                     expect: [403,   403,      403,  200], keys: true,  request: async () => ({ method: "PATCH", path: `/v1/members/${ownerId}`, body: { role: "owner" } }) },
  { what: "add an owner",                        expect: [403,   403,      403,  201], keys: true,  request: async () => ({ method: "POST", path: "/v1/members", body: { email: `o-${unique()}@test.local`, role: "owner" } }) },
  { what: "a whole-instance operation (cluster)", expect: [403,  403,      403,  403], keys: true,  request: async () => ({ method: "GET", path: "/v1/cluster" }) },
];

beforeAll(async () => {
  scope = await scopeOf(server, key);
  ownerSession = await server.session();
  ownerId = (await call(server, "GET", "/v1/auth/me", { headers: ownerSession })).body.user.id;
  sourceId = (await call(server, "POST", "/v1/sources", { key, body: { name: "the matrix's source" } })).body.source.id;
  appId = (await call(server, "POST", "/v1/applications", { key, body: { name: "the matrix's app" } })).body.application.id;
  destinationId = await createDestination(server, key, { url: "https://example.com/in" });
  bystander = await joinAs(server, { headers: ownerSession }, "developer");
  for (const role of ROLES) {
    // A viewer cannot make a key: theirs was made while they were a developer (it acts as a viewer now).
    const member = await joinAs(server, { headers: ownerSession }, role === "viewer" ? "developer" : role);
    const made = await keyOf(server, member);
    if (role === "viewer") expect((await call(server, "PATCH", `/v1/members/${member.userId}`, { headers: ownerSession, body: { role: "viewer" } })).status).toBe(200);
    callers[role] = { role, member, key: made.key };
  }
});

async function attempt(op: Operation, caller: Caller, via: "session" | "key") {
  const req = await op.request(caller);
  const auth = via === "session" ? { headers: caller.member.session } : { key: caller.key };
  const res = await call(server, req.method, req.path, { ...auth, body: req.body });
  return res;
}

describe.each(MATRIX)("the role matrix: $what", (op) => {
  it.each(ROLES.map((role, i) => ({ role, status: op.expect[i]! })))("$role with a session: $status", async ({ role, status }) => {
    const res = await attempt(op, callers[role], "session");
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    if (status === 403) expect(res.body.error.code).toBe("forbidden");
  });
  if (op.keys) {
    it.each(ROLES.map((role, i) => ({ role, status: op.expect[i]! })))("$role with a key it made: $status", async ({ role, status }) => {
      const res = await attempt(op, callers[role], "key");
      expect(res.status, JSON.stringify(res.body)).toBe(status);
    });
  }
});

describe("API key listings by role", () => {
  it("an admin or owner lists every member's keys, with whose they are; a developer or viewer only its own", async () => {
    const theirs = await keyOf(server, bystander);
    for (const role of ROLES) {
      const res = await call(server, "GET", "/v1/auth/api-keys", { headers: callers[role].member.session });
      expect(res.status).toBe(200);
      const ids = res.body.api_keys.map((k: { id: string }) => k.id);
      expect(ids.includes(theirs.id), role).toBe(role === "admin" || role === "owner");
      const owners = new Set(res.body.api_keys.map((k: { user_id: string }) => k.user_id));
      if (role === "developer" || role === "viewer") expect([...owners]).toEqual([callers[role].member.userId]);
    }
    const listed = (await call(server, "GET", "/v1/auth/api-keys", { headers: ownerSession })).body.api_keys.find((k: { id: string }) => k.id === theirs.id);
    expect(listed).toMatchObject({ user_id: bystander.userId, user_email: bystander.email });
  });

  it("a developer revokes its own key", async () => {
    const dev = callers.developer;
    const own = await keyOf(server, dev.member);
    expect((await call(server, "DELETE", `/v1/auth/api-keys/${own.id}`, { headers: dev.member.session })).status).toBe(200);
    expect((await call(server, "GET", "/v1/auth/me", { key: own.key })).status).toBe(401);
  });
});

describe("the instance's owner", () => {
  it("alone reaches whole-instance operations", async () => {
    expect((await call(server, "GET", "/v1/cluster", { headers: ownerSession })).status).toBe(200);
    expect((await call(server, "GET", "/v1/cluster", { key })).status).toBe(200);
  });
});

describe("a demoted member's key", () => {
  it("acts with the new role on the next request, and with the old one again once promoted", async () => {
    const m = await joinAs(server, { headers: ownerSession }, "admin");
    const { key: k } = await keyOf(server, m);
    const addMember = () => call(server, "POST", "/v1/members", { key: k, body: { email: `d-${unique()}@test.local`, role: "viewer" } });
    const createSource = () => call(server, "POST", "/v1/sources", { key: k, body: { name: `d ${unique()}` } });
    expect((await addMember()).status).toBe(201);
    await call(server, "PATCH", `/v1/members/${m.userId}`, { headers: ownerSession, body: { role: "viewer" } });
    expect((await call(server, "GET", "/v1/auth/me", { key: k })).body.role).toBe("viewer");
    expect((await addMember()).status).toBe(403);
    expect((await createSource()).status).toBe(403);
    expect((await call(server, "GET", `/v1/sources/${sourceId}`, { key: k })).status).toBe(200);
    await call(server, "PATCH", `/v1/members/${m.userId}`, { headers: ownerSession, body: { role: "developer" } });
    expect((await createSource()).status).toBe(201);
    expect((await addMember()).status).toBe(403);
  });

  it("of scope read stays a viewer whatever its member's role", async () => {
    const m = await joinAs(server, { headers: ownerSession }, "owner");
    const { key: k } = await keyOf(server, m, "read");
    expect((await call(server, "GET", "/v1/auth/me", { key: k })).body.role).toBe("viewer");
    expect((await call(server, "GET", `/v1/sources/${sourceId}/secret`, { key: k })).status).toBe(403);
  });
});

import { addMemberInput, addedMember, memberBody, memberList, memberParam, updateMemberInput } from "../../contracts/members";
import { successBody } from "../../contracts/common";
import { addMember, listMembers, removeMember, updateMember } from "../../domain/members";
import { requires } from "../middleware/auth";
import { jsonBody, operation, responses, type Api } from "../openapi";

/** The caller's organization's members (docs/teams.md, "Members and invites"): every role reads, admins and owners manage. */
export function registerMemberRoutes(api: Api) {
  const tags = ["members"];
  const manage = { tags, middleware: [requires("administer")] };
  operation(
    api,
    { tags, method: "get", path: "/members", summary: "List the organization's members, oldest first", responses: responses({ status: 200, schema: memberList }, [401]) },
    async (c) => c.json(await listMembers(c.get("deps"), c.get("scope")), 200),
  );
  operation(
    api,
    {
      ...manage,
      method: "post",
      path: "/members",
      summary: "Add a member, or invite one who has no account yet",
      description:
        "An email that already has an account joins at once (invite_url null); a new one gets an invited membership and a one-time link for 7 days, shown once. An invited member added again gets a fresh link (the previous one stops working). Only an owner may add an owner.",
      request: jsonBody(addMemberInput),
      responses: responses({ status: 201, schema: addedMember }, [400, 401, 403, 409]),
    },
    async (c, { body }) => c.json(await addMember(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    {
      ...manage,
      method: "patch",
      path: "/members/{user_id}",
      summary: "Change a member's role, or disable / re-enable them",
      description:
        "Nobody changes their own role or disables themselves; only an owner changes an owner or makes one; the organization keeps an active owner (409). Disabling revokes the member's API keys of the organization and ends their sessions at once.",
      request: { params: memberParam, ...jsonBody(updateMemberInput) },
      responses: responses({ status: 200, schema: memberBody }, [400, 401, 403, 404, 409]),
    },
    async (c, { params, body }) => c.json(await updateMember(c.get("deps"), c.get("scope"), params.user_id, body), 200),
  );
  operation(
    api,
    {
      ...manage,
      method: "delete",
      path: "/members/{user_id}",
      summary: "Remove a member from the organization",
      description: "The same rules as a change; the member's API keys of the organization are revoked and their sessions end at once. Their account stays.",
      request: { params: memberParam },
      responses: responses({ status: 200, schema: successBody }, [401, 403, 404, 409]),
    },
    async (c, { params }) => c.json(await removeMember(c.get("deps"), c.get("scope"), params.user_id), 200),
  );
}

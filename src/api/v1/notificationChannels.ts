import {
  channelDeleted,
  channelDetail,
  channelList,
  channelListItem,
  channelTestResult,
  channelUpdated,
  createChannelInput,
  updateChannelInput,
} from "../../contracts/notificationChannels";
import { createChannel, deleteChannel, getChannel, listChannels, testChannel, updateChannel } from "../../domain/notificationChannels";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Notification channels (docs/decisions.md D9; spec: Notification channels): the spec's unwrapped shapes, config as an object. */
export function registerNotificationChannelRoutes(api: Api) {
  const tags = ["notification-channels"];
  operation(
    api,
    {
      method: "post",
      path: "/notification-channels",
      tags,
      summary: "Create a channel: webhook {url, secret?}, slack {webhook_url}, discord {webhook_url} or email {to, from?, smtp_url?}",
      request: jsonBody(createChannelInput),
      responses: responses({ status: 201, schema: channelListItem }, [400, 401, 403, 404]),
    },
    async (c, { body }) => c.json(await createChannel(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    { method: "get", path: "/notification-channels", tags, summary: "List channels, newest first, secrets masked", responses: responses({ status: 200, schema: channelList }, [401]) },
    async (c) => c.json(await listChannels(c.get("deps"), c.get("scope")), 200),
  );
  operation(
    api,
    { method: "get", path: "/notification-channels/{id}", tags, summary: "Get a channel, secrets masked", request: { params: idParam }, responses: responses({ status: 200, schema: channelDetail }, [401, 404]) },
    async (c, { params }) => c.json(await getChannel(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "patch",
      path: "/notification-channels/{id}",
      tags,
      summary: "Rename a channel or change its config (merged onto the stored one; masked secrets sent back are kept)",
      request: { params: idParam, ...jsonBody(updateChannelInput) },
      responses: responses({ status: 200, schema: channelUpdated }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await updateChannel(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    {
      method: "delete",
      path: "/notification-channels/{id}",
      tags,
      summary: "Delete a channel; 409 while an alert rule still lists it",
      request: { params: idParam },
      responses: responses({ status: 200, schema: channelDeleted }, [401, 403, 404, 409]),
    },
    async (c, { params }) => c.json(await deleteChannel(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      method: "post",
      path: "/notification-channels/{id}/test",
      tags,
      summary: "Send a test notification now (one try); a failed send answers 200 with success false and the error",
      request: { params: idParam },
      responses: responses({ status: 200, schema: channelTestResult }, [401, 403, 404]),
    },
    async (c, { params }) => c.json(await testChannel(c.get("deps"), c.get("scope"), params.id), 200),
  );
}

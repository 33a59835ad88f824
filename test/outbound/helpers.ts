import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { call, type TestServer } from "../helpers/server";
import { startSink, type Sink, type SinkRequest } from "../helpers/sink";

/** Outbound test fixtures through the public API: applications, endpoints, messages. */

export async function createApp(server: TestServer, key: string, body: Record<string, unknown> = {}) {
  const res = await call(server, "POST", "/v1/applications", { key, body: { name: `App ${Math.random().toString(36).slice(2, 8)}`, ...body } });
  if (res.status !== 201) throw new Error(`create application: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.application as { id: string; uid: string; name: string } & Record<string, any>;
}

export async function createEndpoint(server: TestServer, key: string, appId: string, body: Record<string, unknown>) {
  const res = await call(server, "POST", `/v1/applications/${appId}/endpoints`, { key, body });
  if (res.status !== 201) throw new Error(`create endpoint: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.endpoint as { id: string; url: string } & Record<string, any>;
}

export async function endpointSecret(server: TestServer, key: string, appId: string, endpointId: string): Promise<string> {
  const res = await call(server, "GET", `/v1/applications/${appId}/endpoints/${endpointId}/secret`, { key });
  if (res.status !== 200) throw new Error(`endpoint secret: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.secret;
}

export async function sendMessage(server: TestServer, key: string, appId: string, body: Record<string, unknown>) {
  const res = await call(server, "POST", `/v1/applications/${appId}/messages`, { key, body });
  if (res.status !== 202) throw new Error(`send message: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.message as { id: string; status: string; payload: string } & Record<string, any>;
}

export async function getMessage(server: TestServer, key: string, appId: string, id: string) {
  const res = await call(server, "GET", `/v1/applications/${appId}/messages/${id}`, { key });
  if (res.status !== 200) throw new Error(`get message: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.message as { id: string; status: string } & Record<string, any>;
}

export async function messageAttempts(server: TestServer, key: string, appId: string, id: string) {
  const res = await call(server, "GET", `/v1/applications/${appId}/messages/${id}/attempts`, { key });
  if (res.status !== 200) throw new Error(`message attempts: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.attempts as Record<string, any>[];
}

/**
 * Checks a received request's signature with both receiver libraries. With
 * `at` (a time the test's clock moved to), the libraries' 5-minute
 * timestamp tolerance is judged from then rather than from the wall clock:
 * what is checked is the signature, over the timestamp the request carries.
 */
export function verifiesWith(secret: string, req: Pick<SinkRequest, "headers" | "body">, at?: Date): { standardwebhooks: boolean; svix: boolean } {
  const headers = { "webhook-id": req.headers["webhook-id"]!, "webhook-timestamp": req.headers["webhook-timestamp"]!, "webhook-signature": req.headers["webhook-signature"]! };
  const attempt = (verify: () => unknown) => {
    const realNow = Date.now;
    if (at) Date.now = () => at.getTime();
    try {
      verify();
      return true;
    } catch {
      return false;
    } finally {
      Date.now = realNow;
    }
  };
  return {
    standardwebhooks: attempt(() => new StandardWebhook(secret).verify(req.body, headers)),
    svix: attempt(() => new SvixWebhook(secret).verify(req.body, headers)),
  };
}

/** A local receiver; requests are told apart by path (one path per endpoint). */
export function outboundSink(): Sink & { at(path: string): SinkRequest[] } {
  const sink = startSink() as Sink & { at(path: string): SinkRequest[] };
  sink.at = (path) => sink.requests.filter((r) => r.path === path);
  return sink;
}

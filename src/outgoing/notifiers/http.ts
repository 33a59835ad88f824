import { send } from "../sender";
import { NotifyError, type SendContext } from "./types";

/**
 * POSTs JSON to a user-given URL through the delivery sender: the same SSRF
 * guard (a link-local or, when configured, private address is refused), the
 * same timeout covering the whole exchange, and no redirects followed.
 */
export async function postJson(url: string, body: string, headers: Record<string, string>, ctx: SendContext, what: string): Promise<void> {
  const result = await send(
    { url, method: "POST", headers: { "content-type": "application/json", "user-agent": "hookrelay", ...headers }, body: new TextEncoder().encode(body), secretHeaders: [] },
    { timeoutMs: ctx.timeoutMs, blockPrivate: ctx.blockPrivate },
  );
  if (result.ok) return;
  if (result.responseStatus !== null) {
    const snippet = result.responseBody?.trim().slice(0, 200);
    throw new NotifyError(`${what} answered HTTP ${result.responseStatus}${snippet ? `: ${snippet}` : ""}`);
  }
  throw new NotifyError(`${what}: ${result.errorDetail ?? result.error ?? "send failed"}`);
}

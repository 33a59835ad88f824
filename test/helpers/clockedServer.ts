import { createApiKey } from "../../src/domain/apiKeys";
import { defaultScope } from "../../src/domain/bootstrap";
import type { Clock } from "../../src/core/clock";
import type { StartOptions } from "../../src/server";
import { startTestServer, tempDir, type TestServer } from "./server";

/**
 * A real server whose clock the test moves by hand: retries hours apart run
 * in milliseconds. `key` is an API key of the default scope, made through the
 * domain so that no session (whose expiry follows the moved clock) is needed.
 */
export async function startClockedServer(clock: Clock, env: Record<string, string> = {}, start: Pick<StartOptions, "pollMs"> = {}): Promise<{ server: TestServer; key: string }> {
  const server = await startTestServer(env, tempDir(), clock, undefined, start);
  const scope = await defaultScope(server.deps.db);
  if (!scope) throw new Error("no default scope");
  const { key } = await createApiKey(server.deps, { ...scope, userId: null, via: "local", scopes: "*", role: "owner" }, { name: "test" });
  return { server: { ...server, apiKey: async () => key }, key };
}

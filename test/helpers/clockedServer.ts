import { rmSync } from "node:fs";
import { loadConfig } from "../../src/config/config";
import { createApiKey } from "../../src/domain/apiKeys";
import { defaultScope } from "../../src/domain/bootstrap";
import type { Clock } from "../../src/domain/clock";
import { silentLogger } from "../../src/observability/logger";
import { startServer } from "../../src/server";
import { ADMIN, tempDir, type TestServer } from "./server";

/**
 * A real server whose clock the test moves by hand (DESIGN.md, "Time is
 * injected"): retries hours apart run in milliseconds. Answers the parts of
 * TestServer the `call` helper uses; `key` is an API key of the default scope.
 */
export async function startClockedServer(clock: Clock, env: Record<string, string> = {}): Promise<{ server: TestServer; key: string }> {
  const dataDir = tempDir();
  const config = loadConfig({}, {
    HOOKRELAY_PORT: "0",
    HOOKRELAY_HOST: "127.0.0.1",
    HOOKRELAY_DATA_DIR: dataDir,
    HOOKRELAY_ADMIN_EMAIL: ADMIN.email,
    HOOKRELAY_ADMIN_PASSWORD: ADMIN.password,
    HOOKRELAY_SHUTDOWN_TIMEOUT_MS: "2000",
    ...env,
  });
  const running = await startServer(config, { logger: silentLogger, clock });
  const scope = await defaultScope(running.deps.db);
  if (!scope) throw new Error("no default scope");
  const { key } = await createApiKey(running.deps, { ...scope, userId: null, via: "local", scopes: "*" }, { name: "test" });
  const server = {
    ...running,
    dataDir,
    request: (path: string, init?: RequestInit) => fetch(running.url + path, init),
    session: () => Promise.reject(new Error("no sessions on a clocked server")),
    apiKey: async () => key,
    async close() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  } satisfies TestServer;
  return { server, key };
}

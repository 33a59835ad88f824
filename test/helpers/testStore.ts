/**
 * Which store a test run is on (docs/decisions.md D12): SQLite in
 * each test's data dir by default; with HOOKRELAY_TEST_DATABASE=postgres, a
 * throwaway PostgreSQL cluster (test/globalSetup.ts, test/helpers/database.ts).
 * Free of vitest imports: the reporter and the global setup read it too.
 */
export type TestStore = "sqlite" | "postgres";

export function testStoreFromEnv(env: Record<string, string | undefined>): TestStore {
  const wanted = (env.HOOKRELAY_TEST_DATABASE ?? "sqlite").toLowerCase();
  if (wanted === "postgres" || wanted === "postgresql") return "postgres";
  if (wanted === "sqlite" || wanted === "") return "sqlite";
  throw new Error(`HOOKRELAY_TEST_DATABASE=${wanted}: expected sqlite or postgres`);
}

export function storeName(store: TestStore): string {
  return store === "postgres" ? "PostgreSQL" : "SQLite";
}

/** The template every test database is cloned from (migrated once by the global setup). */
export const TEMPLATE_DATABASE = "template_migrated";

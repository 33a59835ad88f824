import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The default forks pool and vmThreads both fail under Bun (TOOLCHAIN.md).
    pool: "threads",
    // HOOKRELAY_TEST_DATABASE=postgres: one throwaway PostgreSQL cluster for the run (test/helpers/database.ts).
    globalSetup: ["./test/globalSetup.ts"],
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    reporters: ["default", "./test/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

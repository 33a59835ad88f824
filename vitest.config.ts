import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The default forks pool and vmThreads both fail under Bun (docs/decisions.md D18).
    pool: "threads",
    // Two files at a time. vitest's default on a 2-core machine is one (cores - 1), but most of a file's
    // time is spent waiting (on servers, child processes, a browser, sinks, qemu), not computing:
    // docs/testing.md has the timings.
    maxWorkers: 2,
    // HOOKRELAY_TEST_DATABASE=postgres: one throwaway PostgreSQL cluster for the run (test/helpers/database.ts).
    globalSetup: ["./test/globalSetup.ts"],
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    reporters: ["default", "./test/summary-reporter.ts"],
    // Deadlines for a busy machine (docs/testing.md): they only bound how long a failing test takes.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll's own default (1 s) is shorter than a busy machine's pause: a poll waits for its condition.
    expect: { poll: { timeout: 15_000, interval: 50 } },
  },
});

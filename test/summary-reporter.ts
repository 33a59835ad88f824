import { relative } from "node:path";
import type { Reporter, SerializedError, TestModule } from "vitest/node";
import { storeName, testStoreFromEnv } from "./helpers/testStore";

/**
 * Ends the run with one plain `tests: N passed, N failed, N skipped` line
 * that CI can read. A test file that failed without a failed test (it could
 * not be loaded, or a beforeAll threw and its tests never ran) counts as one
 * failure, and so does an unhandled error: a failed run never reads `0 failed`.
 * The line ends with the store the run was on (`npm test` runs the suite on
 * SQLite, then on PostgreSQL: HOOKRELAY_TEST_DATABASE).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = []) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const brokenFiles: string[] = [];
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      failed += failedHere;
      const broken = mod.state() === "failed" || [...mod.children.allSuites()].some((s) => s.state() === "failed");
      if (broken && failedHere === 0) {
        failed++;
        brokenFiles.push(relative(process.cwd(), mod.moduleId));
      }
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped (on ${storeName(testStoreFromEnv(process.env))})\n`);
    if (brokenFiles.length > 0) process.stdout.write(`files that failed before their tests could run: ${brokenFiles.join(", ")}\n`);
    if (unhandledErrors.length > 0) process.stdout.write(`unhandled errors: ${unhandledErrors.length}\n`);
  }
}

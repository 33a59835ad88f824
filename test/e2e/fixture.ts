import { afterAll, afterEach, beforeAll } from "vitest";
import { startSink, type Sink } from "../helpers/sink";
import { launchBrowser, loginThroughUi, screenshot, startBinary, type Browser, type Hookrelay } from "./helpers";

export interface BrowserFixture {
  server: Hookrelay;
  browser: Browser;
}

/**
 * The set-up the browser test files share: the compiled binary and a browser
 * for the file, a sink when asked, the admin logged in through the UI when
 * asked; all closed afterwards, and after each test the page guard (test/e2e/helpers.ts)
 * fails it on any console error or failed request. `started` hands them over
 * before the login, so that a file keeps its own `server`, `browser` and `sink`
 * variables (the same pattern as test/helpers/fixture.ts).
 */
export interface BinaryOptions {
  sink?: boolean;
  login?: boolean;
  /** HOOKRELAY_* settings for the binary; a function when they name something the file starts first (a provider's port). */
  env?: () => Record<string, string> | Promise<Record<string, string>>;
}
export function useBinaryAndBrowser(options: BinaryOptions & { sink: true }, started: (fixture: BrowserFixture & { sink: Sink }) => void): void;
export function useBinaryAndBrowser(options: BinaryOptions, started: (fixture: BrowserFixture) => void): void;
export function useBinaryAndBrowser(options: BinaryOptions, started: (fixture: BrowserFixture & { sink: Sink }) => void): void {
  let server: Hookrelay | undefined;
  let browser: Browser | undefined;
  let sink: Sink | undefined;
  beforeAll(async () => {
    if (options.sink) sink = startSink();
    const env = (await options.env?.()) ?? {};
    [server, browser] = await Promise.all([startBinary(env), launchBrowser()]);
    // The overloads promise a sink exactly when one was asked for.
    started({ server, browser, sink } as BrowserFixture & { sink: Sink });
    if (options.login) await loginThroughUi(browser.page, browser.guard, server.url, "/");
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    sink?.close();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail" && server && browser) {
      // A failed test shows where the page was and what it showed, and what the server warned about meanwhile.
      const page = browser.page;
      const shot = `failed-${ctx.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}`;
      await screenshot(page, shot).catch(() => {});
      const headings = await page.getByRole("heading").allTextContents().catch(() => []);
      console.error(
        [
          `the page: ${page.url()} (headings: ${headings.join(" | ") || "none"}; screenshot ${shot}.png)`,
          `what the page reported: ${browser.guard.problems.join("; ") || "nothing"}`,
          `hookrelay's warnings and errors:\n${warnings(server.output())}`,
        ].join("\n"),
      );
    }
    browser!.guard.assertClean();
  });
}

/** The last warn and error lines of the server's JSON log. */
function warnings(output: string): string {
  const lines = output.split("\n").filter((line) => /"level":"(warn|error|fatal)"/.test(line));
  return lines.slice(-40).join("\n") || "(none)";
}

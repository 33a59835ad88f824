/**
 * Browser-test helpers: the compiled binary as a child process on a free port
 * with a temp data dir, one headless Debian chromium per test file, and a guard
 * that fails the test on any console error, page error, failed request or
 * unexpected HTTP error status.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { dropStore, storeEnv } from "../helpers/database";

export const ROOT = resolve(import.meta.dirname, "../..");
export const BIN = join(ROOT, "dist/hookrelay");
/** Where screenshot() writes; HOOKRELAY_SCREENSHOTS points it elsewhere (a /tmp dir to look through). */
export const SCREENSHOTS = process.env.HOOKRELAY_SCREENSHOTS || join(ROOT, "test-output/screenshots");
export const ADMIN = { email: "admin@e2e.local", password: "e2e correct horse battery" };

// ---------- the binary ----------

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Builds dist/hookrelay when it is missing or older than the UI sources (so a
 * UI change is what the browser sees). Test files run in parallel: a lock
 * directory makes one of them build while the others wait.
 */
export async function ensureBinary() {
  const stale = () => !existsSync(BIN) || statSync(BIN).mtimeMs < newestMtime(join(ROOT, "ui"));
  if (!stale()) return;
  const lock = join(tmpdir(), "hookrelay-e2e-build.lock");
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than two minutes belongs to a build that died.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      } catch {}
      if (Date.now() > deadline) throw new Error("timed out waiting for another test's binary build");
      await sleep(200);
    }
  }
  try {
    if (!stale()) return;
    const proc = spawn(process.execPath, [join(ROOT, "scripts/build.ts")], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (out += d));
    const code = await new Promise<number | null>((res) => proc.on("exit", res));
    if (code !== 0) throw new Error(`bun scripts/build.ts failed (${code}):\n${out}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

export interface Hookrelay {
  url: string;
  dataDir: string;
  /** Everything the process printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** `dist/hookrelay serve` on a free port with a fresh data dir; resolves once /healthz answers 200. */
export async function startBinary(env: Record<string, string> = {}): Promise<Hookrelay> {
  await ensureBinary();
  const dataDir = mkdtempSync(join(tmpdir(), "hookrelay-e2e-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(BIN, ["serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir], {
    cwd: dataDir,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? dataDir,
      HOOKRELAY_ADMIN_EMAIL: ADMIN.email,
      HOOKRELAY_ADMIN_PASSWORD: ADMIN.password,
      HOOKRELAY_BASE_URL: url,
      HOOKRELAY_LOG_FORMAT: "json",
      HOOKRELAY_SHUTDOWN_TIMEOUT_MS: "2000",
      ...(await storeEnv(dataDir)),
      ...env,
    },
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  let exited: number | null | undefined;
  const exit = new Promise<void>((res) =>
    child.on("exit", (code) => {
      exited = code;
      res();
    }),
  );

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`hookrelay exited with ${exited} before it was healthy:\n${out}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) break;
    } catch {}
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`hookrelay did not become healthy on ${url}:\n${out}`);
    }
    await sleep(50);
  }

  return {
    url,
    dataDir,
    output: () => out,
    async stop() {
      if (exited === undefined) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exit;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
      await dropStore(dataDir);
    },
  };
}

// ---------- the browser ----------

export interface Browser {
  context: BrowserContext;
  page: Page;
  guard: PageGuard;
  close(): Promise<void>;
}

/** One headless chromium (fresh profile) with one page, watched by a PageGuard. */
export async function launchBrowser(opts: { colorScheme?: "light" | "dark" } = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "hookrelay-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 800 },
    colorScheme: opts.colorScheme ?? "light",
  });
  // A deadline for a busy machine, as vitest.config.ts's: it only bounds how long a failing step takes. Chromium,
  // the server and another test file share two cores; 10 s once ran out between a click and the page it opens.
  context.setDefaultTimeout(30_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const guard = new PageGuard(page);
  return {
    context,
    page,
    guard,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

interface Allowance {
  status: number;
  url: string;
  left: number;
}

/**
 * Collects what must never happen on a page: console errors, uncaught page
 * errors, failed requests, HTTP responses >= 400. A test that expects an error
 * response (a 401 before login, a 400 it provokes) allows it first with
 * expectResponse(); the browser's matching "Failed to load resource" console
 * line is then allowed too.
 */
export class PageGuard {
  problems: string[] = [];
  private allowances: Allowance[] = [];
  private consoleAllowances: Allowance[] = [];

  constructor(page: Page) {
    page.on("console", (msg) => {
      if (msg.type() !== "error") return;
      const text = msg.text();
      const where = msg.location().url ?? "";
      const m = /status of (\d{3})/.exec(text);
      if (m) {
        const a = this.consoleAllowances.find((x) => x.left > 0 && x.status === Number(m[1]) && where.includes(x.url));
        if (a) {
          a.left--;
          return;
        }
      }
      this.problems.push(`console error: ${text} (${where})`);
    });
    page.on("pageerror", (err) => this.problems.push(`page error: ${err.stack ?? err.message}`));
    // A request still running when the test navigates (goto, reload) is aborted by the browser: not the app's fault.
    let navigations = 0;
    const startedAt = new WeakMap<object, number>();
    // Between a navigation's request and its commit the old page still runs (a polling timer may
    // start a request then): what is aborted meanwhile is the navigation's doing too.
    let navigationPending = false;
    page.on("framenavigated", (frame) => {
      if (frame !== page.mainFrame()) return;
      navigations++;
      navigationPending = false;
    });
    page.on("request", (req) => {
      // A reload aborts the old page's requests before the new document commits (framenavigated):
      // count the navigation from its own request, so those aborts are seen as the navigation's.
      if (req.isNavigationRequest() && req.frame() === page.mainFrame()) {
        navigations++;
        navigationPending = true;
      }
      startedAt.set(req, navigations);
    });
    page.on("requestfailed", (req) => {
      const failure = req.failure()?.errorText ?? "failed";
      if (failure === "net::ERR_ABORTED") {
        // A live stream the page closed itself (leaving a live page) ends as aborted.
        if (req.url().includes("/v1/events/stream")) return;
        if (req.method() === "GET" && (navigationPending || navigations > (startedAt.get(req) ?? navigations))) return;
      }
      this.problems.push(`request failed: ${req.method()} ${req.url()} ${failure}`);
    });
    page.on("response", (res) => {
      if (res.status() < 400) return;
      const url = res.url();
      const a = this.allowances.find((x) => x.left > 0 && x.status === res.status() && url.includes(x.url));
      if (a) {
        a.left--;
        return;
      }
      this.problems.push(`HTTP ${res.status()} ${res.request().method()} ${url}`);
    });
  }

  /** Allows the next `times` responses with this status whose URL contains `url`. */
  expectResponse(status: number, url: string, times = 1) {
    this.allowances.push({ status, url, left: times });
    this.consoleAllowances.push({ status, url, left: times });
  }

  /** Throws (listing them) when anything went wrong since the last check. */
  assertClean() {
    const found = this.problems;
    this.problems = [];
    if (found.length > 0) throw new Error(`The page reported problems:\n  ${found.join("\n  ")}`);
  }
}

// ---------- steps shared by tests ----------

/** A JSON call to /v1 with the browser's session cookie (and the same-origin header a browser sends); throws on anything but 2xx. */
export async function sessionCall<T>(browser: Browser, baseUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await browser.context.request.fetch(baseUrl + "/v1" + path, { method, headers: { origin: baseUrl }, data: body });
  if (!res.ok()) throw new Error(`${method} ${path}: ${res.status()} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Saves a full-page screenshot to test-output/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // Let transitions and the flash of new rows settle.
  await page.waitForTimeout(250);
  // From the top, so the sticky sidebar is drawn where a person sees it.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Opens the app logged out, logs in through the form, waits for the shell. The
 * login page asks for nothing (no /v1/auth/me answering 401), so the guard
 * excuses no error response.
 */
export async function loginThroughUi(page: Page, _guard: PageGuard, url: string, path = "/") {
  await page.goto(url + path);
  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
}

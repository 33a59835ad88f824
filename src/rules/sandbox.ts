import { availableParallelism } from "node:os";

/**
 * Where user code runs: JSONata transforms and regex filter rules
 * (docs/delivery.md, "Limits of transforms and filters"). A single built-in
 * call (`$pad` with a huge width, a backtracking regex) is one step no
 * in-process guardrail can interrupt, and would hold the event loop, and so
 * ingest, /healthz and every delivery, until it ends. So they run in a small
 * pool of web workers: each takes one call at a time, a call has a deadline,
 * and a worker whose call misses it is terminated and replaced. Workers start
 * on the first call, so a server without transforms or regex rules pays
 * nothing, and are reused across calls, so a call costs a message round trip
 * (docs/performance.md).
 */

export type SandboxRequest =
  | { op: "transform"; expression: string; input: unknown; timeoutMs: number }
  | { op: "regex"; checks: { pattern: string; text: string }[] };

/** What the worker answers: the value (a transform's result as JSON text) or a failure it described. */
export type SandboxReply = { ok: true; value: unknown } | { ok: false; failure: SandboxFailure };

export interface SandboxFailure {
  /** `time` / `memory`: a limit stopped it; `error`: it failed on its own (the message says why). */
  kind: "time" | "memory" | "error";
  message: string;
  jsonataCode?: string;
  position?: number;
}

/**
 * How far past its deadline a transform may run before its worker is
 * terminated: JSONata's own guardrail normally ends it first, with its
 * position. A regex has no such guardrail: its worker goes at the deadline.
 */
const TRANSFORM_KILL_GRACE_MS = 500;
/**
 * The memory backstop: while calls run, the process's resident memory is
 * sampled; growing this much above what it was when the oldest running call
 * started terminates the busy workers (their calls fail with `memory`).
 */
export const RSS_GROWTH_LIMIT_BYTES = 512 * 1024 * 1024;
const RSS_SAMPLE_MS = 20;

/** Bun's Worker has ref()/unref() (as Node's does); the DOM typings lack them. */
type RefWorker = Worker & { ref(): void; unref(): void };

interface Call {
  request: SandboxRequest;
  deadlineMs: number;
  resolve(reply: SandboxReply): void;
  reject(error: unknown): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  call: Call | null;
  timer: ReturnType<typeof setTimeout> | null;
  /** Process RSS when its call started. */
  rssAtStart: number;
}

/**
 * The worker's entry. From source (bun, vitest) it is the .ts file beside
 * this one; inside the compiled binary scripts/build.ts adds it as a second
 * entrypoint, which Bun stores under the entrypoints' common root as .js.
 */
function workerEntry(): string {
  if (import.meta.url.includes("/$bunfs/")) return "/$bunfs/root/src/rules/sandboxWorker.js";
  return new URL("./sandboxWorker.ts", import.meta.url).href;
}

export class Sandbox {
  private readonly slots: Slot[] = [];
  private readonly queue: Call[] = [];
  private watchdog: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(private readonly size: number) {}

  /** Runs one request; `deadlineMs` counts from when a worker takes it, not from the queue. */
  submit(request: SandboxRequest, deadlineMs: number): Promise<SandboxReply> {
    if (this.closed) return Promise.reject(new Error("the sandbox is closed"));
    return new Promise((resolve, reject) => {
      this.queue.push({ request, deadlineMs, resolve, reject });
      this.dispatch();
    });
  }

  /** Workers alive now (tests and metrics). */
  workers(): number {
    return this.slots.length;
  }

  /** Calls running now (tests). */
  busy(): number {
    return this.slots.filter((s) => s.call !== null).length;
  }

  /** Workers terminated so far because a call ran out of time or memory (tests). */
  terminated = 0;

  /** Ends every worker; calls still queued or running fail. */
  close() {
    this.closed = true;
    for (const call of this.queue.splice(0)) call.reject(new Error("the sandbox is closed"));
    for (const slot of [...this.slots]) this.retire(slot, { ok: false, failure: { kind: "error", message: "the sandbox is closed" } });
  }

  private dispatch() {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.ready && s.call === null);
      if (!slot) {
        // A worker still starting takes the next call when it is ready.
        if (this.slots.some((s) => !s.ready) || this.slots.length >= this.size) return;
        this.spawn();
        return;
      }
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn() {
    const worker = new Worker(workerEntry(), { smol: true, ref: false });
    const slot: Slot = { worker, ready: false, call: null, timer: null, rssAtStart: 0 };
    this.slots.push(slot);
    worker.onmessage = (e: MessageEvent<{ ready?: true } & Partial<{ reply: SandboxReply }>>) => {
      if (e.data.ready) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      if (e.data.reply) this.finish(slot, e.data.reply);
    };
    worker.onerror = (e) => {
      // Failed to load, or an error escaped the worker's own handling: its call fails, a new worker takes the queue.
      this.retire(slot, { ok: false, failure: { kind: "error", message: `the sandbox failed: ${e.message}` } });
      if (!slot.ready) for (const call of this.queue.splice(0)) call.reject(new Error(`the sandbox failed to start: ${e.message}`));
      this.dispatch();
    };
  }

  private start(slot: Slot, call: Call) {
    slot.call = call;
    slot.rssAtStart = process.memoryUsage().rss;
    // Keeps the process alive while a call runs (an idle pool never does).
    (slot.worker as RefWorker).ref();
    slot.timer = setTimeout(() => {
      this.terminated++;
      this.retire(slot, { ok: false, failure: { kind: "time", message: `ran longer than ${call.deadlineMs} ms` } });
      this.dispatch();
    }, call.deadlineMs + (call.request.op === "transform" ? TRANSFORM_KILL_GRACE_MS : 0));
    this.watch();
    slot.worker.postMessage(call.request);
  }

  private finish(slot: Slot, reply: SandboxReply) {
    const call = slot.call;
    if (!call) return;
    this.clear(slot);
    call.resolve(reply);
    this.dispatch();
  }

  private clear(slot: Slot) {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.call = null;
    (slot.worker as RefWorker).unref();
    if (!this.slots.some((s) => s.call !== null) && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = null;
    }
  }

  /** Terminates a worker and answers its call, if any, with `reply`; the next dispatch spawns a replacement. */
  private retire(slot: Slot, reply: SandboxReply | null) {
    const call = slot.call;
    this.clear(slot);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    slot.worker.onmessage = null;
    slot.worker.onerror = null;
    slot.worker.terminate();
    if (call && reply) call.resolve(reply);
  }

  private watch() {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => {
      const busy = this.slots.filter((s) => s.call !== null);
      if (busy.length === 0) return;
      const rss = process.memoryUsage().rss;
      const base = Math.min(...busy.map((s) => s.rssAtStart));
      if (rss - base <= RSS_GROWTH_LIMIT_BYTES) return;
      // Which busy worker grew cannot be told from outside: each stops.
      const mib = Math.round(RSS_GROWTH_LIMIT_BYTES / 1024 / 1024);
      this.terminated += busy.length;
      for (const slot of busy) this.retire(slot, { ok: false, failure: { kind: "memory", message: `the process grew by more than ${mib} MiB while it ran` } });
      this.dispatch();
    }, RSS_SAMPLE_MS);
    this.watchdog.unref?.();
  }
}

let shared: Sandbox | null = null;

/** The process's one pool: two workers (one on a single core), so one slow call does not hold up every other. */
export function sandbox(): Sandbox {
  shared ??= new Sandbox(Math.min(2, availableParallelism()));
  return shared;
}

import { bulkRetryStep } from "../domain/bulkRetry";
import type { Deps } from "../domain/deps";
import { completeJob, runningJobs, type JobRow } from "../domain/jobs";
import { recoverStep } from "../domain/recovery";
import { redriveStep } from "../domain/redrive";
import { outstandingJobDeliveries, replayBatchSize, replayStep } from "../domain/replay";
import type { Logger } from "../observability/logger";
import type { BackgroundTask } from "../core/tasks";
import { errorMessage } from "../contracts/errors";

/**
 * Runs replay, bulk-retry, redrive and recovery jobs. Every `running` job row is
 * picked up: when created (bus `job.created`), at start-up (jobs survive a
 * restart and resume from their cursor) and by a slow poll (jobs created by
 * a CLI in local mode). Each job runs in its own loop; a job is never run
 * twice at once.
 *
 * Replay pacing and order: a batch is up to rate_limit events, queued one
 * at a time, each only once the delivery before it settled (so they reach
 * the destination in received_at order, whatever the worker's concurrency);
 * then a pause of `pauseMs` (one second), and the next batch.
 */
export interface JobRunnerOptions {
  logger: Logger;
  pollMs?: number;
  /** The spec's one-second pause between replay batches. */
  pauseMs?: number;
}

export interface JobRunner extends BackgroundTask {
  wake(): void;
  /** The worker recorded deliveries of these jobs: their waits re-check. */
  settled(jobIds: string[]): void;
}

export function startJobRunner(deps: Deps, opts: JobRunnerOptions): JobRunner {
  const pollMs = opts.pollMs ?? 5000;
  const pauseMs = opts.pauseMs ?? 1000;
  const running = new Map<string, Promise<void>>();
  const waiters = new Map<string, Set<() => void>>();
  const sleepers = new Set<() => void>();
  let stopped = false;
  let scanning: Promise<void> | null = null;

  /** Resolves after `ms`, early on stop or (with `jobId`) when the job's deliveries settle. */
  function pause(ms: number, jobId?: string): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        if (jobId) waiters.get(jobId)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
      if (jobId) {
        const set = waiters.get(jobId) ?? new Set();
        set.add(done);
        waiters.set(jobId, set);
      }
    });
  }

  async function waitSettled(jobId: string) {
    // Woken by the worker; the one-second timeout is only a safety net.
    while (!stopped && (await outstandingJobDeliveries(deps, jobId)) > 0) await pause(1000, jobId);
  }

  async function run(job: JobRow) {
    if (job.kind === "replay") {
      // Deliveries queued before a restart settle first: they are part of the batch before the pause.
      await waitSettled(job.id);
      const batchSize = replayBatchSize(job);
      let done = false;
      while (!stopped && !done) {
        // One delivery of the job in flight at a time: the next event is queued once the one before it settled.
        for (let i = 0; i < batchSize && !stopped && !done; i++) {
          const step = await replayStep(deps, job, 1);
          if (step.queued > 0) await waitSettled(job.id);
          done = step.done;
          // Turned away by the replay connection's filter: no delivery, so it takes no place in the second's batch.
          if (step.queued === 0 && step.passedOver > 0) {
            i--;
            continue;
          }
          // Nothing ready yet (PostgreSQL: the rest of the window is within the read horizon): the pause comes first.
          if (step.queued === 0) break;
        }
        if (!done && !stopped) await pause(pauseMs);
      }
      if (stopped) return;
      await waitSettled(job.id);
    } else {
      const steps: Record<string, ((deps: Deps, job: JobRow) => Promise<boolean>) | undefined> = { bulk_retry: bulkRetryStep, redrive: redriveStep, recover: recoverStep };
      const step = steps[job.kind] ?? null;
      if (!step) {
        opts.logger.warn("unknown job kind; completing it", { job_id: job.id, kind: job.kind });
      } else {
        while (!stopped && !(await step(deps, job))) await new Promise((r) => setImmediate(r));
      }
      if (stopped) return;
    }
    await completeJob(deps, job.id);
  }

  function spawn(job: JobRow) {
    if (running.has(job.id) || stopped) return;
    const p = run(job)
      .catch((err) => opts.logger.error("job failed; it resumes on the next poll", { job_id: job.id, kind: job.kind, error: errorMessage(err) }))
      .finally(() => running.delete(job.id));
    running.set(job.id, p);
  }

  let rescan = false;
  function scan() {
    if (stopped) return;
    if (scanning) {
      rescan = true; // a job created while a scan reads may be missing from it
      return;
    }
    scanning = runningJobs(deps)
      .then((jobs) => jobs.forEach(spawn))
      .catch((err) => opts.logger.error("job scan failed", { error: errorMessage(err) }))
      .finally(() => {
        scanning = null;
        if (rescan) {
          rescan = false;
          scan();
        }
      });
  }

  const poll = setInterval(scan, pollMs);
  poll.unref?.();
  setImmediate(scan);

  return {
    name: "job-runner",
    running: () => !stopped,
    wake: scan,
    settled(jobIds) {
      for (const id of jobIds) for (const w of [...(waiters.get(id) ?? [])]) w();
    },
    async stop() {
      stopped = true;
      clearInterval(poll);
      for (const s of [...sleepers]) s();
      await scanning;
      await Promise.allSettled([...running.values()]);
    },
  };
}

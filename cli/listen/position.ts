/**
 * The saved positions of `listen --since last`
 * (listen-state.json in the config dir) and the position of one source
 * during a run.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FEED_OVERLAP_MS, type FeedEvent } from "../feed";
import { configDir, writeJsonPrivate } from "../profiles";

/**
 * Where `--since last` resumes, per server/source/URL: every event received
 * before `received_at`, and `id` itself, was handled (forwarded with a 2xx,
 * or deliberately skipped), except within the read horizon below it (see
 * `recent`). A failed forward holds the position there, so the next run
 * sends that event again; `done` lists events after the position that were
 * handled anyway, so they are not sent twice.
 *
 * On PostgreSQL with several nodes an event stamped a moment before the
 * position may commit after it (src/db/horizon.ts). So the position is
 * final only a read horizon below `received_at` (and not before `from`,
 * where the position's runs began): `recent` lists the events handled
 * within that horizon, and the next run reads it again and forwards what
 * is not listed.
 */
export interface Checkpoint {
  received_at: string;
  id: string;
  done?: string[];
  recent?: Handled[];
  from?: string;
}
interface Handled {
  id: string;
  received_at: string;
}
type Checkpoints = Record<string, Checkpoint>;
const checkpointFile = () => join(configDir(), "listen-state.json");
/** Enough to cover a long outage of the local server; past it an event may be forwarded twice, never lost. */
const MAX_DONE = 1000;
/** How far below a position events may still arrive: the read horizon of PostgreSQL (the client cannot tell the server's store). */
const UNSETTLED_MS = FEED_OVERLAP_MS;

const minus = (iso: string, ms: number) => new Date(Date.parse(iso) - ms).toISOString();

/** Before this, every event was handled (or predates the runs): checkpoints of older versions have no `recent` and settle at the position. */
export function settledBefore(mark: Checkpoint): string {
  if (!mark.recent) return mark.received_at;
  const below = minus(mark.received_at, UNSETTLED_MS);
  return mark.from && mark.from > below ? mark.from : below;
}

export function readCheckpoints(): Checkpoints {
  try {
    return existsSync(checkpointFile()) ? (JSON.parse(readFileSync(checkpointFile(), "utf8")) as Checkpoints) : {};
  } catch {
    return {};
  }
}

/** Writes this run's positions over a fresh read, so another listen's positions (other sources or URLs) survive. */
export function saveCheckpoint(key: string, mark: Checkpoint) {
  try {
    writeJsonPrivate(checkpointFile(), { ...readCheckpoints(), [key]: mark });
  } catch {}
}

/**
 * The position of one source during a run. `resumed`: this run started from
 * the saved position (`--since last`), so it continues it; otherwise the
 * first event this run handles (or fails) starts a new one, from the feed's start.
 */
export class Position {
  private held = false;
  private continues: boolean;
  /** The saved position this run resumed from: what earlier runs handled. */
  private readonly earlier: Checkpoint | undefined;
  /** Where this run's feed began (a new position covers what arrives from there). */
  start: string | undefined;

  constructor(
    private mark: Checkpoint | undefined,
    resumed: boolean,
    private readonly save: (mark: Checkpoint) => void,
  ) {
    this.earlier = resumed ? mark : undefined;
    this.continues = this.earlier !== undefined;
  }

  /** Handled by an earlier run: settled, the position itself, handled within the horizon, or listed as done (which moves the position on). */
  seen(e: FeedEvent) {
    if (!this.earlier) return false;
    if (e.received_at < settledBefore(this.earlier) || e.id === this.earlier.id) return true;
    if (this.earlier.recent?.some((r) => r.id === e.id)) return true;
    if (!this.earlier.done?.includes(e.id)) return false;
    this.handled(e);
    return true;
  }

  /** Forwarded or deliberately skipped: the position moves past it (never back), unless an earlier failure holds it. */
  handled(e: FeedEvent) {
    this.begin(e);
    const mark = this.mark;
    const done = (mark?.done ?? []).filter((id) => id !== e.id);
    const newest = mark && mark.id && mark.received_at > e.received_at ? mark : { received_at: e.received_at, id: e.id };
    const floor = minus(this.held ? mark!.received_at : newest.received_at, UNSETTLED_MS);
    const recent = [...(mark?.recent ?? []).filter((r) => r.id !== e.id && r.received_at >= floor), { id: e.id, received_at: e.received_at }].slice(-MAX_DONE);
    const from = mark?.from ?? this.start;
    if (this.held) this.mark = { ...mark!, done: [...done, e.id].slice(-MAX_DONE), recent };
    else this.mark = { ...newest, ...(done.length ? { done } : {}), recent, ...(from ? { from } : {}) };
    this.save(this.mark);
  }

  /** Not forwarded: the position stays before it (`--since` is inclusive), so the next `--since last` sends it again. */
  failed(e: FeedEvent) {
    this.begin(e);
    if (!this.held && !this.mark) this.mark = { received_at: e.received_at, id: "", recent: [], ...(this.start ? { from: this.start } : {}) };
    this.held = true;
    this.save(this.mark!);
  }

  /** A run that did not resume starts its own position, covering what its feed delivers from its start. */
  private begin(e: FeedEvent) {
    if (this.continues) return;
    this.mark = undefined;
    if (!this.start || this.start > e.received_at) this.start = e.received_at;
    this.continues = true;
  }
}

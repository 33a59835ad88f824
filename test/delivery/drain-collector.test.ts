import { describe, expect, it } from "vitest";
import { DRAINED_DELIVERIES, DrainCollector, QUIET_MS, type Schedule } from "../../src/delivery/drainCollector";

/** A collector whose timer the test runs by hand: what did not happen is shown without waiting. */
function collector() {
  const state = { collections: 0, pending: null as null | { run: () => void; ms: number } };
  const schedule: Schedule = (run, ms) => {
    state.pending = { run, ms };
    return () => (state.pending = null);
  };
  const c = new DrainCollector(() => state.collections++, schedule);
  const fire = () => {
    const p = state.pending;
    state.pending = null;
    p?.run();
  };
  return { c, state, fire };
}

describe("the drain collector", () => {
  it("collects once, QUIET_MS after the worker goes idle having drained DRAINED_DELIVERIES", () => {
    const { c, state, fire } = collector();
    c.finished(DRAINED_DELIVERIES);
    c.idle();
    expect(state.pending?.ms).toBe(QUIET_MS);
    expect(state.collections).toBe(0);
    fire();
    expect(state.collections).toBe(1);
    // Idle again with nothing delivered since: no second collection.
    c.idle();
    expect(state.pending).toBeNull();
  });

  it("never collects after a small drain, however long the worker idles", () => {
    const { c, state } = collector();
    c.finished(DRAINED_DELIVERIES - 1);
    c.idle();
    expect(state.pending).toBeNull();
    expect(state.collections).toBe(0);
  });

  it("waits for the next idle moment when work comes back before the quiet time is over", () => {
    const { c, state, fire } = collector();
    c.finished(DRAINED_DELIVERIES);
    c.idle();
    c.busy();
    expect(state.pending).toBeNull();
    expect(state.collections).toBe(0);
    c.idle();
    fire();
    expect(state.collections).toBe(1);
  });

  it("schedules one collection however many times the worker says it is idle", () => {
    const { c, state, fire } = collector();
    c.finished(DRAINED_DELIVERIES * 3);
    c.idle();
    const first = state.pending;
    c.idle();
    expect(state.pending).toBe(first);
    fire();
    expect(state.collections).toBe(1);
  });
});

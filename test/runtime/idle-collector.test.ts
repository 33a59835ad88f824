import { describe, expect, it } from "vitest";
import { CHECK_MS, GROWTH_BYTES, IDLE_CPU_SHARE, IdleCollector, type IdleCollectorProbe } from "../../src/runtime/idleCollector";

const MiB = 1024 * 1024;

/** The process as the collector sees it: CPU used and RSS, moved by the test; a collection brings RSS down to `afterCollect`. */
function processLike(rss: number) {
  const state = { cpu: 0, rss, collections: 0, afterCollect: rss };
  const probe: IdleCollectorProbe = {
    cpuMicros: () => state.cpu,
    rssBytes: () => state.rss,
    collect: () => {
      state.collections++;
      state.rss = state.afterCollect;
    },
  };
  return { state, probe };
}

/** One CHECK_MS second in which the process used `share` of a core. */
const second = (state: { cpu: number }, share: number) => (state.cpu += share * CHECK_MS * 1000);

describe("the idle collector", () => {
  it("collects once when the process goes quiet after growing, and not again while it stays quiet", () => {
    const { state, probe } = processLike(120 * MiB);
    const collector = new IdleCollector(probe, 0);
    // Busy: a backlog drains and RSS grows; the engine is left alone.
    state.rss = 200 * MiB;
    state.afterCollect = 118 * MiB;
    second(state, 0.9);
    expect(collector.check(CHECK_MS)).toBeNull();
    expect(state.collections).toBe(0);
    // The first quiet second collects.
    second(state, 0.01);
    expect(collector.check(2 * CHECK_MS)).toMatchObject({ before: 200 * MiB, after: 118 * MiB });
    expect(state.collections).toBe(1);
    // Quiet seconds after it do not collect again.
    for (let s = 3; s < 10; s++) {
      second(state, 0);
      expect(collector.check(s * CHECK_MS)).toBeNull();
    }
    expect(state.collections).toBe(1);
  });

  it("leaves a quiet process alone while it has grown less than GROWTH_BYTES", () => {
    const { state, probe } = processLike(100 * MiB);
    const collector = new IdleCollector(probe, 0);
    state.rss = 100 * MiB + GROWTH_BYTES - 1;
    second(state, 0);
    expect(collector.check(CHECK_MS)).toBeNull();
    expect(state.collections).toBe(0);
  });

  it("never collects in a second that used IDLE_CPU_SHARE of a core or more, however much it grew", () => {
    const { state, probe } = processLike(100 * MiB);
    const collector = new IdleCollector(probe, 0);
    state.rss = 400 * MiB;
    for (let s = 1; s <= 5; s++) {
      second(state, IDLE_CPU_SHARE);
      expect(collector.check(s * CHECK_MS)).toBeNull();
    }
    expect(state.collections).toBe(0);
  });

  it("measures growth from the lowest RSS seen since, so memory the engine gave back is not counted twice", () => {
    const { state, probe } = processLike(150 * MiB);
    const collector = new IdleCollector(probe, 0);
    // The engine collected on its own: RSS fell to 100 MiB while idle.
    state.rss = 100 * MiB;
    second(state, 0);
    expect(collector.check(CHECK_MS)).toBeNull();
    // Growing back past 100 MiB + GROWTH_BYTES, then quiet: collected.
    state.rss = 100 * MiB + GROWTH_BYTES;
    state.afterCollect = 101 * MiB;
    second(state, 0);
    expect(collector.check(2 * CHECK_MS)).not.toBeNull();
  });
});

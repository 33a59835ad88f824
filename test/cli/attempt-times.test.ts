import { describe, expect, it } from "vitest";
import { attemptTimes, attemptWhenCell } from "../../cli/output/attempts";
import { makeChalk } from "../../cli/output/color";
import { table } from "../../cli/output/table";

/** An attempt's time is when it was sent; a queued one shows when it is due (docs/cli.md, "events tail and listen"; docs/admin-ui.md, "Delivery attempts and rejected events"). */
describe("attempt times", () => {
  const sent = "2026-01-01T10:00:00.000Z";
  const due = new Date(Date.now() + 4 * 60_000 + 5_000).toISOString();

  it("reads the sent time from an event detail's attempted_at and from the attempts list's sent_at", () => {
    expect(attemptTimes({ attempted_at: sent, scheduled_at: sent })).toEqual({ sent, scheduled: null });
    expect(attemptTimes({ sent_at: sent, scheduled_at: sent, created_at: "x" })).toEqual({ sent, scheduled: null });
  });

  it("a queued attempt (no sent time yet) is scheduled, in either shape", () => {
    expect(attemptTimes({ attempted_at: null, scheduled_at: due, status: "queued" })).toEqual({ sent: null, scheduled: due });
    expect(attemptTimes({ sent_at: null, scheduled_at: due, created_at: sent, status: "queued" })).toEqual({ sent: null, scheduled: due });
    expect(attemptWhenCell({ sent_at: null, scheduled_at: due, status: "queued" })).toBe(`scheduled ${due}`);
  });

  it("a terminal table shows the queued attempt as `scheduled in 4m`", () => {
    const rows = [
      { id: "da_1", status: "queued", sent_at: null, scheduled_at: due },
      { id: "da_2", status: "failed", sent_at: new Date(Date.now() - 120_000).toISOString(), scheduled_at: sent },
    ];
    const text = table(rows, ["id", "status", { key: "sent_at", header: "sent", get: (a) => attemptWhenCell(a) }], makeChalk(0), 120);
    expect(text).toMatch(/da_1\s+queued\s+scheduled in 4m/);
    expect(text).toMatch(/da_2\s+failed\s+2m ago/);
  });
});

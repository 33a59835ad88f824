import { describe, expect, it } from "vitest";
import { issueClassOf, issueSteps, type IssueOutcome } from "../../src/rules/issueGrouping";

let n = 0;
function outcome(destinationId: string, error: string | null, responseStatus: number | null = null): IssueOutcome {
  n++;
  return {
    attempt: { id: `da_${n}`, eventId: `evt_${n}`, orgId: "o", envId: "e", destinationId },
    status: error ? "failed" : "success",
    error,
    errorDetail: error ? `detail ${n}` : null,
    responseStatus,
  };
}

const summary = (steps: ReturnType<typeof issueSteps>) => steps.map((s) => (s.kind === "resolve" ? `resolve ${s.destinationId}` : `${s.fingerprint} x${s.count} last ${s.last.attempt.id}`));

describe("issueClassOf", () => {
  it("names the four failure classes; an SSRF refusal is a connection error; a disabled or deleted destination opens nothing", () => {
    expect(["http_503", "http_400", "timeout", "connection_error", "transform_error", "ssrf_blocked", "destination_disabled", "destination_not_found", null].map(issueClassOf)).toEqual([
      "http_503", "http_400", "timeout", "connection_error", "transform_error", "connection_error", null, null, null,
    ]);
  });
});

describe("issueSteps", () => {
  it("costs a healthy destination one resolve per batch, however many successes", () => {
    expect(summary(issueSteps([outcome("d1", null), outcome("d1", null), outcome("d2", null), outcome("d1", null)]))).toEqual(["resolve d1", "resolve d2"]);
  });

  it("folds a run of failures into one step per class, with the count and the last failure's details", () => {
    n = 0;
    const steps = issueSteps([outcome("d1", "http_503", 503), outcome("d1", "timeout"), outcome("d1", "http_503", 503), outcome("d2", "http_503", 503)]);
    expect(summary(steps)).toEqual(["d1:http_503 x2 last da_3", "d1:timeout x1 last da_2", "d2:http_503 x1 last da_4"]);
  });

  it("keeps the order that matters: failures before a success are resolved by it, failures after it stay open", () => {
    n = 0;
    const steps = issueSteps([outcome("d1", "http_500"), outcome("d1", null), outcome("d1", null), outcome("d1", "http_500"), outcome("d1", "destination_disabled")]);
    expect(summary(steps)).toEqual(["d1:http_500 x1 last da_1", "resolve d1", "d1:http_500 x1 last da_4"]);
  });

  it("writes nothing for an empty batch or failures that are no destination's fault", () => {
    expect(issueSteps([])).toEqual([]);
    expect(issueSteps([outcome("d1", "destination_not_found")])).toEqual([]);
  });
});

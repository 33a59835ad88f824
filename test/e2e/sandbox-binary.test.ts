import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server";
import { cli, cliEnv, ensureBinary } from "../cli/helpers";

/**
 * The sandbox's worker (src/rules/sandbox.ts) is a second entrypoint of
 * the compiled binary (scripts/build.ts): without it a transform inside
 * dist/hookrelay cannot run at all. The CLI in local mode runs the preview
 * in its own process, so this is the binary's worker at work.
 */
let server: TestServer;
beforeAll(async () => {
  await ensureBinary();
  server = await startTestServer();
});
afterAll(() => server.close());

const preview = (expression: string, body: unknown) =>
  cli(["connections", "test-transform", "--expression", expression, "--body", JSON.stringify(body), ...server.storeArgs, "--json"], { env: cliEnv(), binary: true });

describe("transforms inside dist/hookrelay", () => {
  it("run in the bundled worker, and its limits hold there", async () => {
    const ok = await preview('{"n": $count(items), "name": $uppercase(name), "ok": $contains(name, /^x/)}', { items: [1, 2, 3], name: "x1" });
    expect(ok.code).toBe(0);
    expect(ok.json()).toEqual({ result: { n: 3, name: "X1", ok: true } });

    const pad = await preview('$length($pad("", 100000000, "a"))', {});
    expect(pad.code).toBe(1);
    expect(pad.errorJson().error).toMatchObject({ code: "transform_limit_exceeded", message: expect.stringMatching(/\$pad's result would be 100000000 characters long/) });

    const regex = await preview("$contains(s, /(a*)*b/) or $contains(s, /(a*)*c/) or $contains(s, /(a*)*d/) or $contains(s, /(a*)*e/)", { s: "a".repeat(100_000) });
    expect(regex.code).toBe(1);
    expect(regex.errorJson().error).toMatchObject({ code: "transform_limit_exceeded", message: expect.stringMatching(/ran longer than the 1000 ms time limit/) });
  });
});

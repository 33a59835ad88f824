import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOGIN_LIMITS } from "../../src/api/middleware/loginThrottle";
import { manualClock } from "../../src/core/clock";
import { startClockedServer } from "../helpers/clockedServer";
import { ADMIN, call, type TestServer } from "../helpers/server";
import { cli, cliEnv } from "../cli/helpers";

const clock = manualClock();
let server: TestServer;
beforeAll(async () => {
  // The test's own requests come from 127.0.0.1: trusting it lets X-Forwarded-For name other addresses.
  ({ server } = await startClockedServer(clock, { HOOKRELAY_TRUST_PROXY: "127.0.0.1" }));
});
afterAll(() => server.close());

/** Each login checks an argon2id hash: tens of them take a while on a busy machine. */
const SLOW_LOGINS_MS = 180_000;

const login = (from: string, email: string, password: string) => call(server, "POST", "/v1/auth/login", { headers: { "x-forwarded-for": from }, body: { email, password } });

function expectThrottled(res: Awaited<ReturnType<typeof login>>, seconds: number) {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ code: "rate_limited", details: { retry_after_seconds: seconds } });
  expect(res.headers.get("retry-after")).toBe(String(seconds));
}

describe("POST /v1/auth/login is throttled per address", () => {
  it("answers 429 with Retry-After after 10 failures from one address, even for the right password, until the window passes", async () => {
    const { failures, windowMs } = LOGIN_LIMITS.perAddress;
    for (let i = 0; i < failures; i++) expect((await login("198.51.100.7", ADMIN.email, "wrong")).status).toBe(401);
    expectThrottled(await login("198.51.100.7", ADMIN.email, ADMIN.password), windowMs / 1000);
    expectThrottled(await login("198.51.100.7", "someone@else", "x"), windowMs / 1000);
    // Another address is not held back by this one's failures.
    expect((await login("198.51.100.8", ADMIN.email, ADMIN.password)).status).toBe(200);

    clock.advance(windowMs - 1000);
    expectThrottled(await login("198.51.100.7", ADMIN.email, ADMIN.password), 1);
    clock.advance(1000);
    expect((await login("198.51.100.7", ADMIN.email, ADMIN.password)).status).toBe(200);
  }, SLOW_LOGINS_MS);

  it("checks at most 10 passwords of 50 wrong logins sent at once; the rest answer 429 unchecked", async () => {
    const { failures, windowMs } = LOGIN_LIMITS.perAddress;
    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => login("198.51.100.20", `burst${i}@test.local`, "wrong")));
    const checked = burst.filter((r) => r.status === 401);
    // The clock stands still: exactly the limit's number are checked.
    expect(checked.length).toBe(failures);
    for (const r of checked) expect(r.body.error.code).toBe("unauthorized");
    for (const r of burst.filter((r) => r.status !== 401)) expectThrottled(r, windowMs / 1000);
    clock.advance(windowMs);
  }, SLOW_LOGINS_MS);

  it("counts a right password in a burst as no failure of its address", async () => {
    const { failures, windowMs } = LOGIN_LIMITS.perAddress;
    // A good login and wrong ones at once: the good one is taken back from the address's count, so 9 wrong ones still leave one try.
    const burst = await Promise.all([login("198.51.100.21", ADMIN.email, ADMIN.password), ...Array.from({ length: failures - 1 }, () => login("198.51.100.21", "nobody@test.local", "wrong"))]);
    expect(burst.map((r) => r.status).sort()).toEqual([200, ...Array(failures - 1).fill(401)]);
    expect((await login("198.51.100.21", "nobody@test.local", "wrong")).status).toBe(401);
    expectThrottled(await login("198.51.100.21", ADMIN.email, ADMIN.password), windowMs / 1000);
    clock.advance(windowMs);
  }, SLOW_LOGINS_MS);

  it("counts an IPv6 /64 as one address", async () => {
    const { failures } = LOGIN_LIMITS.perAddress;
    for (let i = 0; i < failures; i++) expect((await login(`2001:db8:1:2::${i + 1}`, "nobody@x", "wrong")).status).toBe(401);
    expect((await login("2001:db8:1:2:ffff::1", ADMIN.email, ADMIN.password)).status).toBe(429);
    expect((await login("2001:db8:1:3::1", ADMIN.email, ADMIN.password)).status).toBe(200);
    clock.advance(LOGIN_LIMITS.perAddress.windowMs);
  }, SLOW_LOGINS_MS);
});

describe("POST /v1/auth/login is throttled per account", () => {
  // 33 logins, each an argon2id verification: a second or more apiece on a busy machine (hence its own time limit).
  it("answers 429 for an account that failed 30 times from many addresses, over a sliding window", async () => {
    const { failures, windowMs } = LOGIN_LIMITS.perAccount;
    const perAddress = 5;
    // 30 failures: 5 from each of 6 addresses, a minute apart.
    for (let group = 0; group < failures / perAddress; group++) {
      for (let i = 0; i < perAddress; i++) expect((await login(`203.0.113.${group + 1}`, ADMIN.email.toUpperCase(), "wrong")).status).toBe(401);
      clock.advance(60_000);
    }
    // The oldest counted failure is 6 minutes old: 9 minutes to go, from any address, in any letter case.
    expectThrottled(await login("192.0.2.99", ADMIN.email, ADMIN.password), windowMs / 1000 - 6 * 60);
    // Only this account: another one answers as usual.
    expect((await login("192.0.2.99", "other@test.local", "wrong")).status).toBe(401);

    // When the first group leaves the window, 5 more tries open up.
    clock.advance(windowMs - 6 * 60_000);
    expect((await login("192.0.2.99", ADMIN.email, ADMIN.password)).status).toBe(200);
  }, SLOW_LOGINS_MS);

  it("forgets an account's failures after a successful login", async () => {
    // Whatever failures the tests before left in the window (one that failed half-way) are out of it.
    clock.advance(LOGIN_LIMITS.perAccount.windowMs);
    // Two rounds of 16 would pass the account's 30 if the first were still counted.
    for (let i = 0; i < 16; i++) expect((await login(`192.0.2.${10 + i}`, ADMIN.email, "wrong")).status).toBe(401);
    expect((await login("192.0.2.50", ADMIN.email, ADMIN.password)).status).toBe(200);
    for (let i = 0; i < 16; i++) expect((await login(`192.0.2.${100 + i}`, ADMIN.email, "wrong")).status).toBe(401);
    expect((await login("192.0.2.51", ADMIN.email, ADMIN.password)).status).toBe(200);
  }, SLOW_LOGINS_MS);
});

describe("hookrelay users unlock (local mode)", () => {
  it("lets an account locked by failures from many addresses log in again at once", async () => {
    const { failures } = LOGIN_LIMITS.perAccount;
    for (let i = 0; i < failures; i++) expect((await login(`198.18.0.${i + 1}`, ADMIN.email, "wrong")).status).toBe(401);
    expect((await login("198.18.1.1", ADMIN.email, ADMIN.password)).status).toBe(429);

    const unlocked = await cli(["users", "unlock", ADMIN.email.toUpperCase(), "--json", ...server.storeArgs], { env: cliEnv() });
    expect(unlocked.code, unlocked.stderr).toBe(0);
    expect(unlocked.json()).toMatchObject({ user: { email: ADMIN.email }, unlocked_at: expect.any(String) });
    // The clock has not moved: only the unlock lets it in.
    expect((await login("198.18.1.1", ADMIN.email, ADMIN.password)).status).toBe(200);

    // Failures after the unlock count again: the same unlock does not clear them twice.
    for (let i = 0; i < failures; i++) expect((await login(`198.18.2.${i + 1}`, ADMIN.email, "wrong")).status).toBe(401);
    expect((await login("198.18.1.2", ADMIN.email, ADMIN.password)).status).toBe(429);
    // 60 password checks.
  }, 2 * SLOW_LOGINS_MS);

  it("answers not_found for an unknown account, and refuses remote mode", async () => {
    const unknown = await cli(["users", "unlock", "nobody@test.local", "--json", ...server.storeArgs], { env: cliEnv() });
    expect(unknown.code).toBe(1);
    expect(unknown.errorJson().error.code).toBe("not_found");
    const remote = await cli(["users", "unlock", ADMIN.email, "--url", server.url, "--api-key", "hr_x"], { env: cliEnv() });
    expect(remote.code).toBe(2);
  });
});

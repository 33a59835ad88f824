import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOGIN_LIMITS } from "../../src/api/middleware/loginThrottle";
import { manualClock } from "../../src/domain/clock";
import { startClockedServer } from "../helpers/clockedServer";
import { ADMIN, call, type TestServer } from "../helpers/server";

const clock = manualClock();
let server: TestServer;
beforeAll(async () => {
  // The test's own requests come from 127.0.0.1: trusting it lets X-Forwarded-For name other addresses.
  ({ server } = await startClockedServer(clock, { HOOKRELAY_TRUST_PROXY: "127.0.0.1" }));
});
afterAll(() => server.close());

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
  });

  it("counts an IPv6 /64 as one address", async () => {
    const { failures } = LOGIN_LIMITS.perAddress;
    for (let i = 0; i < failures; i++) expect((await login(`2001:db8:1:2::${i + 1}`, "nobody@x", "wrong")).status).toBe(401);
    expect((await login("2001:db8:1:2:ffff::1", ADMIN.email, ADMIN.password)).status).toBe(429);
    expect((await login("2001:db8:1:3::1", ADMIN.email, ADMIN.password)).status).toBe(200);
    clock.advance(LOGIN_LIMITS.perAddress.windowMs);
  });
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
  }, 180_000);

  it("forgets an account's failures after a successful login", async () => {
    // Whatever failures the tests before left in the window (one that failed half-way) are out of it.
    clock.advance(LOGIN_LIMITS.perAccount.windowMs);
    // Two rounds of 16 would pass the account's 30 if the first were still counted.
    for (let i = 0; i < 16; i++) expect((await login(`192.0.2.${10 + i}`, ADMIN.email, "wrong")).status).toBe(401);
    expect((await login("192.0.2.50", ADMIN.email, ADMIN.password)).status).toBe(200);
    for (let i = 0; i < 16; i++) expect((await login(`192.0.2.${100 + i}`, ADMIN.email, "wrong")).status).toBe(401);
    expect((await login("192.0.2.51", ADMIN.email, ADMIN.password)).status).toBe(200);
  });
});

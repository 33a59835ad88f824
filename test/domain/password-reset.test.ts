import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/contracts/errors";
import { manualClock } from "../../src/core/clock";
import { memberships, users } from "../../src/db/schema";
import { spendLink } from "../../src/domain/accountLinks";
import type { Deps } from "../../src/domain/deps";
import { issuePasswordReset } from "../../src/domain/passwordReset";
import { login } from "../../src/domain/sessions";
import { openDomain, type DomainHarness } from "../helpers/domainDeps";
import { ADMIN } from "../helpers/server";

/** The one-time link `hookrelay users reset-password` prints (src/domain/passwordReset.ts), on a clock the test moves. */
let h: DomainHarness;
let clock: ReturnType<typeof manualClock>;
let deps: Deps;
beforeAll(async () => {
  h = await openDomain({ baseUrl: "https://hooks.example.com/" });
  clock = manualClock(new Date());
  deps = { ...h.deps, clock };
});
afterAll(async () => {
  await h?.close();
});

const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, "");

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe("issuePasswordReset", () => {
  it("prints a link on the base URL's /accept page, good for 24 hours", async () => {
    const reset = await issuePasswordReset(deps, ADMIN.email.toUpperCase());
    expect(reset.url).toMatch(/^https:\/\/hooks\.example\.com\/accept#token=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(reset.expires_at) - clock.now().getTime()).toBe(24 * 3600 * 1000);
    expect(reset.user.email).toBe(ADMIN.email);
  });

  it("is dead after 24 hours: spending it then is refused and the password stays", async () => {
    const reset = await issuePasswordReset(deps, ADMIN.email);
    clock.advance(24 * 3600 * 1000 + 1);
    const err = await refusal(spendLink(deps, tokenOf(reset.url), { password: "a password too late to set" }));
    expect(err.code).toBe("validation_error");
    expect(err.message).toMatch(/invalid, already used or expired/);
    await expect(login(deps, ADMIN.email, ADMIN.password)).resolves.toMatchObject({ user: { email: ADMIN.email } });
  });

  it("works just before the 24 hours are up, once", async () => {
    const reset = await issuePasswordReset(deps, ADMIN.email);
    clock.advance(24 * 3600 * 1000 - 1000);
    await expect(spendLink(deps, tokenOf(reset.url), { password: "set in the last second" })).resolves.toMatchObject({ kind: "password_reset", user: { email: ADMIN.email } });
    const again = await refusal(spendLink(deps, tokenOf(reset.url), { password: "set a second time, no" }));
    expect(again.code).toBe("validation_error");
    await expect(login(deps, ADMIN.email, "set in the last second")).resolves.toBeTruthy();
  });

  it("a newer link replaces an older one", async () => {
    const older = await issuePasswordReset(deps, ADMIN.email);
    const newer = await issuePasswordReset(deps, ADMIN.email);
    expect((await refusal(spendLink(deps, tokenOf(older.url), { password: "from the older link" }))).code).toBe("validation_error");
    await expect(spendLink(deps, tokenOf(newer.url), { password: "from the newer link" })).resolves.toBeTruthy();
  });

  it("re-enables the owner's disabled membership in their organization", async () => {
    const [admin] = await deps.db.select().from(users).where(eq(users.email, ADMIN.email));
    await deps.db.update(memberships).set({ status: "disabled" }).where(eq(memberships.userId, admin!.id));
    const reset = await issuePasswordReset(deps, ADMIN.email);
    expect(reset.reenabled).toBe(true);
    const [m] = await deps.db.select().from(memberships).where(eq(memberships.userId, admin!.id));
    expect(m!.status).toBe("active");
    expect((await issuePasswordReset(deps, ADMIN.email)).reenabled).toBe(false);
  });

  it("names an unknown email as not found", async () => {
    const err = await refusal(issuePasswordReset(deps, "nobody@example.com"));
    expect(err.code).toBe("not_found");
    expect(err.message).toBe("User nobody@example.com not found");
  });
});

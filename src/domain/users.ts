import { eq } from "drizzle-orm";
import { AppError, notFound } from "../contracts/errors";
import { sessions, users } from "../db/schema";
import { transaction } from "../db/transaction";
import type { Deps } from "./deps";

/** Shorter than this is refused: the admin password guards every secret the relay holds. */
export { MIN_PASSWORD_LENGTH } from "../contracts/account";
import { MIN_PASSWORD_LENGTH } from "../contracts/account";

/**
 * Sets a user's password (local mode: whoever can open the database may),
 * and signs out every session of that user in the same transaction, so a
 * password that leaked (printed once into a journal) stops working
 * everywhere at once. README.md, "Admin password".
 */
export async function setUserPassword(deps: Deps, email: string, password: string): Promise<{ email: string; sessions_ended: number }> {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError("validation_error", `the password must be at least ${MIN_PASSWORD_LENGTH} characters`, [{ field: "password", message: `at least ${MIN_PASSWORD_LENGTH} characters` }]);
  }
  const passwordHash = await Bun.password.hash(password, { algorithm: "argon2id" });
  return transaction(deps.db, async (tx) => {
    const [user] = await tx.update(users).set({ passwordHash }).where(eq(users.email, email.trim().toLowerCase())).returning({ id: users.id, email: users.email });
    if (!user) throw notFound("User");
    const ended = await tx.delete(sessions).where(eq(sessions.userId, user.id)).returning({ id: sessions.id });
    return { email: user.email, sessions_ended: ended.length };
  });
}

import { AppError } from "../contracts/errors";
import { validCredentials, type CredentialId } from "../domain/credentials";
import type { Deps } from "../domain/deps";

/**
 * How often the credentials of open streams are read again from the
 * database. The bus ends a stream at once when its key is revoked or its
 * session logs out (on every node of a PostgreSQL cluster); this re-check
 * is what holds when the bus cannot tell: a session that expires, a
 * revocation made by the CLI in local mode, a message lost while a node's
 * listening connection was down. Streams end within 5 s of any of them.
 */
export const STREAM_RECHECK_MS = 2_000;

export interface StreamGuard {
  /**
   * Admits one more stream for the credential, or throws 429 `rate_limited`
   * when it already holds its limit on this node. `end` is called when the
   * credential stops being valid; the returned function lets go of the slot.
   */
  admit(credential: CredentialId, end: () => void): () => void;
  /** Open streams of one credential on this node. */
  count(credential: CredentialId): number;
  stop(): void;
}

/** Open streams per credential on this node, each ended when its credential is revoked, logged out or expires. */
export function createStreamGuard(deps: Pick<Deps, "db" | "clock" | "bus">, opts: { perCredential: number; recheckMs?: number }): StreamGuard {
  const open = new Map<CredentialId, Set<() => void>>();
  let timer: ReturnType<typeof setInterval> | null = null;
  let checking = false;

  const endAll = (credential: CredentialId) => {
    const enders = open.get(credential);
    if (!enders) return;
    open.delete(credential);
    for (const end of enders) {
      try {
        end();
      } catch {}
    }
    idle();
  };

  const recheck = async () => {
    if (checking || open.size === 0) return;
    checking = true;
    try {
      const held = [...open.keys()];
      const valid = await validCredentials(deps, held);
      for (const c of held) if (!valid.has(c)) endAll(c);
    } catch {
      // The database did not answer: keep the streams, and ask again next time.
    } finally {
      checking = false;
    }
  };

  const idle = () => {
    if (open.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  const unsubscribe = deps.bus.subscribe((m) => {
    if (m.type === "credential.revoked") endAll(m.credential);
  });

  return {
    admit(credential, end) {
      const enders = open.get(credential) ?? new Set();
      if (enders.size >= opts.perCredential) {
        throw new AppError("rate_limited", `This credential already holds ${opts.perCredential} open event streams (HOOKRELAY_STREAMS_PER_CREDENTIAL): close one first`, {
          limit: opts.perCredential,
        });
      }
      enders.add(end);
      open.set(credential, enders);
      timer ??= setInterval(() => void recheck(), opts.recheckMs ?? STREAM_RECHECK_MS);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const now = open.get(credential);
        if (!now) return;
        now.delete(end);
        if (now.size === 0) open.delete(credential);
        idle();
      };
    },
    count: (credential) => open.get(credential)?.size ?? 0,
    stop() {
      unsubscribe();
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

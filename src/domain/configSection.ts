import type { ConfigChange } from "../contracts/relayFile";
import type { Deps, Scope } from "./deps";

/**
 * A part of the relay file whose use-cases live above the domain layer
 * (applications and their endpoints, src/outbound/configApplications.ts).
 * The edges that export and apply (src/api/v1/config.ts, the CLI's local
 * mode) hand it in, so the domain orchestrates it like the rest, in the
 * same transaction, without importing a worker.
 */
export interface ConfigSection {
  key: "applications";
  /** The section as the file holds it: sorted, secrets as references unless `includeSecrets`. */
  export(deps: Deps, scope: Scope, opts: { includeSecrets: boolean }): Promise<unknown[]>;
  /** What applying the file's entries would change, and how to carry it out (inside the caller's transaction). */
  plan(deps: Deps, scope: Scope, entries: unknown[], opts: { prune: boolean }): Promise<{ changes: ConfigChange[]; carryOut(): Promise<void> }>;
}

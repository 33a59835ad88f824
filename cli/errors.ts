import { AppError, type ErrorBody } from "../src/contracts/errors";

/** Stable exit codes (documented in `hookrelay help exit-codes`). */
export const EXIT = { ok: 0, error: 1, usage: 2, auth: 4 } as const;

/** An error the CLI reports as one line on stderr and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
    readonly code?: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage, "usage");

/** 401/403 → exit 4 (auth), any other API error → exit 1. */
export function exitCodeForStatus(status: number) {
  return status === 401 || status === 403 ? EXIT.auth : EXIT.error;
}

/** An API error body (from HTTP or from an AppError) as a CliError: one line, the code, the body for --json. */
export function apiErrorToCli(status: number, body: ErrorBody, hint?: string) {
  const { code, message, details } = body.error;
  let line = message;
  // Field problems come as a list; a schema_violation's as `{errors: [...]}` beside what was checked.
  const problems: unknown = Array.isArray(details) ? details : (details as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(problems) && problems.length > 0) {
    // Details that are not field problems (a 409's list of the rules in the way) say nothing here: the command words them.
    const parts = problems
      .slice(0, 5)
      .map((d: { field?: string; path?: string; message?: string }) => [d.field ?? d.path, d.message].filter(Boolean).join(": "))
      .filter(Boolean);
    if (parts.length > 0) line += ` (${parts.join("; ")}${problems.length > 5 ? "; …" : ""})`;
  }
  if (hint) line += `; ${hint}`;
  return new CliError(line, exitCodeForStatus(status), code, body);
}

/** What local mode's domain call threw, as the CliError the same API error would have become. */
export function appErrorToCli(err: unknown): unknown {
  if (err instanceof AppError) return apiErrorToCli(err.status, err.toBody());
  return err;
}

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

import type { Opts } from "./command";
import { CliError, EXIT } from "./errors";

/** Interactive questions, only ever asked when stdin and stderr are terminals. */
export const canPrompt = () => Boolean(process.stdin.isTTY && process.stderr.isTTY);

/** Reads one line from the terminal; with `hidden` nothing is echoed (passwords). */
export function ask(question: string, opts: { hidden?: boolean } = {}): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = "";
    const wasRaw = stdin.isRaw;
    stdin.setRawMode?.(true);
    stdin.setEncoding("utf8");
    stdin.resume();
    const done = (err?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode?.(wasRaw ?? false);
      stdin.pause();
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003") return done(Object.assign(new Error("cancelled"), { code: "cancelled" }));
        if (ch === "\u0004" && value === "") return done();
        if (ch === "\u007f" || ch === "\b") {
          if (value.length > 0) {
            value = value.slice(0, -1);
            if (!opts.hidden) process.stderr.write("\b \b");
          }
          continue;
        }
        if (ch < " ") continue;
        value += ch;
        if (!opts.hidden) process.stderr.write(ch);
      }
    };
    stdin.on("data", onData);
  });
}

/** Asks before destroying something, but only in a terminal and without --yes. */
export async function confirm(opts: Opts, question: string) {
  if (opts.yes || !canPrompt()) return;
  const answer = (await ask(`${question} [y/N] `)).trim().toLowerCase();
  if (answer !== "y" && answer !== "yes") throw new CliError("cancelled", EXIT.error, "cancelled");
}

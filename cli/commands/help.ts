import type { Command } from "commander";
import { usageError } from "../errors";

export const EXIT_CODES_TEXT = `Exit codes of every hookrelay command

  0  ok      the command did what it was asked (also when a reader such as \`head\`
             closes the pipe early: the command stops quietly)
  1  error   the request failed: validation (400), not found (404), conflict (409),
             any other API error, a network error, or a server error; the URL is
             not a hookrelay server (bad_response); a waited-for job (--wait) had
             failures (job_failed) or did nothing, a job started with nothing to
             do, or \`events retry <id>\` queued nothing (nothing_done): the
             result is still printed, the counts go to stderr
  2  usage   unknown command or flag, missing argument, malformed flag value or --data,
             a relay file \`apply\` cannot use (syntax, a bad field, an unknown name,
             an unresolved secret reference: nothing was changed)
  3  changes \`apply --dry-run --exit-code\`: the environment differs from the file
  4  auth    not logged in, wrong password, invalid or revoked API key, expired session,
             or not allowed (HTTP 401 and 403, e.g. session_required, forbidden)

Errors are one line on stderr with the error code; with --json, stderr carries the
API's error body instead: {"error":{"code":"…","message":"…","details":…}}.
`;

export const ENVIRONMENT_TEXT = `Environment variables read by the client commands (flags win)

  HOOKRELAY_URL        server URL for remote mode                 (--url)
  HOOKRELAY_API_KEY    API key for remote mode                    (--api-key)
  HOOKRELAY_PROFILE    saved login profile to use                 (--profile)
  HOOKRELAY_DATA_DIR   local mode: work on this data dir directly (--data-dir)
  HOOKRELAY_EMAIL      login email                                (login --email)
  HOOKRELAY_PASSWORD   login password                             (login --password)
  XDG_CONFIG_HOME      profiles live in $XDG_CONFIG_HOME/hookrelay/ (default ~/.config)
  NO_COLOR             set to anything to turn colour off; FORCE_COLOR forces it on

\`hookrelay serve --help\` lists the server's HOOKRELAY_* settings.
`;

const TOPICS: Record<string, string> = { "exit-codes": EXIT_CODES_TEXT, environment: ENVIRONMENT_TEXT };

/** `hookrelay help [topic | command…]`: replaces commander's help command to add topics. */
export function registerHelp(program: Command) {
  const cmd = program
    .command("help [topic...]")
    .description("Show help for a command, or a topic: exit-codes, environment")
    .addHelpText("after", "\nExamples:\n  $ hookrelay help exit-codes\n  $ hookrelay help sources create");
  cmd.action((topic: string[]) => {
    if (topic.length === 0) return program.outputHelp();
    const text = TOPICS[topic.join(" ")];
    if (text) return void process.stdout.write(text);
    let target = program;
    for (const name of topic) {
      const next = target.commands.find((c) => c.name() === name || c.aliases().includes(name));
      if (!next) throw usageError(`no help topic or command "${topic.join(" ")}"; topics: ${Object.keys(TOPICS).join(", ")}`);
      target = next;
    }
    target.outputHelp();
  });
  return cmd;
}

/** For tests and completion: every command under the program, depth first. */
export function walk(cmd: Command, prefix: string[] = []): { path: string[]; cmd: Command }[] {
  return cmd.commands.flatMap((c) => [{ path: [...prefix, c.name()], cmd: c }, ...walk(c, [...prefix, c.name()])]);
}

/**
 * Lists the API pages with cursors (applications, messages, endpoint
 * attempts): the answer's `cursor` asks for the next page.
 */
import type { Command } from "commander";
import { parseIntArg } from "./command";
import type { Context } from "./context";

/** `--cursor` and `--limit` of a cursor-paged list. */
export function cursorPageFlags(cmd: Command) {
  return cmd.option("--cursor <cursor>", "continue from the previous page's cursor").option("--limit <n>", "page size, 1 to 100 (default 50)", parseIntArg("--limit", 1));
}

/** Where the next page starts, said on stderr so a pipe only gets rows. */
export function nextPage(ctx: Context, res: { cursor: string | null }, what: string) {
  if (res.cursor) ctx.out.note(`more ${what}: --cursor ${res.cursor}`);
}

import type { ChalkInstance } from "chalk";
import { colorLevel, makeChalk } from "./color";
import { record, table, tsv, type ColumnSpec } from "./table";

export type { ColumnSpec } from "./table";

/** How a command's result looks to a person; --json ignores it and prints the response. */
export interface View<T = any> {
  /** Key of the array to tabulate, e.g. "sources". */
  list?: string;
  /** Key of the single object to show, e.g. "source"; "" shows the response itself. */
  item?: string;
  /** Columns of the table, or fields of the record (default: every field). */
  columns?: ColumnSpec[];
  /** Free text instead of a table or record (e.g. "Revoked ak_…"). */
  text?: (result: T, c: ChalkInstance) => string;
  /** Printed (to stderr, dim) when a list is empty, on a terminal only. */
  empty?: string;
}

interface Stream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * The one place stdout is written. With --json: exactly the response object.
 * On a terminal: tables and colour (NO_COLOR respected). In a pipe: tab-separated rows.
 */
export class Output {
  readonly tty: boolean;
  readonly c: ChalkInstance;
  readonly errc: ChalkInstance;

  constructor(
    readonly json: boolean,
    readonly stdout: Stream = process.stdout,
    readonly stderr: Stream = process.stderr,
  ) {
    this.tty = Boolean(stdout.isTTY);
    this.c = makeChalk(colorLevel(stdout));
    this.errc = makeChalk(colorLevel(stderr));
  }

  /** Prints a command's result according to the mode. */
  result<T>(res: T, view: View<T> = {}) {
    if (this.json) return this.printJson(res);
    const obj = res as Record<string, unknown>;
    if (view.text) {
      const text = view.text(res, this.c);
      if (text) this.stdout.write(text.endsWith("\n") ? text : text + "\n");
      return;
    }
    if (view.list !== undefined) {
      const rows = (obj?.[view.list] ?? []) as Record<string, unknown>[];
      const columns = view.columns ?? (rows[0] ? Object.keys(rows[0]) : []);
      if (!this.tty) return void this.stdout.write(tsv(rows, columns));
      if (rows.length === 0) return this.note(view.empty ?? "Nothing to show.");
      this.stdout.write(table(rows, columns, this.c, this.stdout.columns || undefined));
      const p = obj.pagination as { total?: number; has_more?: boolean; next_cursor?: string | null } | undefined;
      if (p && typeof p.total === "number" && (p.has_more || p.total > rows.length)) {
        this.note(`${rows.length} of ${p.total}` + (p.next_cursor ? `; next page: --cursor ${p.next_cursor}` : ""));
      }
      return;
    }
    const item = view.item ? obj?.[view.item] : obj;
    if (item && typeof item === "object") {
      this.stdout.write(record(item as Record<string, unknown>, view.columns, this.tty ? this.c : null));
    } else {
      this.stdout.write((item === undefined || item === null ? "" : String(item)) + "\n");
    }
  }

  printJson(value: unknown) {
    this.stdout.write((this.tty ? JSON.stringify(value, null, 2) : JSON.stringify(value)) + "\n");
  }

  /** A remark for a person (stderr, dim); silent in --json mode. */
  note(line: string) {
    if (!this.json) this.stderr.write(this.errc.dim(line) + "\n");
  }

  /** A warning (stderr), shown in every mode. */
  warn(line: string) {
    this.stderr.write(this.errc.yellow("warning: ") + line + "\n");
  }
}

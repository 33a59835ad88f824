/** A one-line progress bar on a terminal's stderr; silent elsewhere (pipes, --json). */
export class Progress {
  private active: boolean;
  private last = "";

  constructor(
    private readonly label: string,
    private readonly stream: { isTTY?: boolean; write(s: string): unknown; columns?: number } = process.stderr,
    enabled = true,
  ) {
    this.active = enabled && Boolean(stream.isTTY);
  }

  update(done: number, total: number, extra = "") {
    if (!this.active) return;
    const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - this.label.length - extra.length - 20));
    const ratio = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(ratio * width);
    const line = `${this.label} [${"█".repeat(filled)}${"░".repeat(width - filled)}] ${done}/${total}${extra ? "  " + extra : ""}`;
    if (line === this.last) return;
    this.last = line;
    this.stream.write(`\r\u001b[2K${line}`);
  }

  done() {
    if (this.active && this.last) this.stream.write("\n");
    this.active = false;
  }
}

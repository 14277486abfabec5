// A one-line progress bar on stderr, drawn only when stderr is a terminal (scripts see just the summary).
export class ProgressBar {
  private readonly tty = process.stderr.isTTY === true;
  private last = 0;
  constructor(
    private readonly total: number,
    private readonly label: string,
  ) {}

  update(done: number, failed: number): void {
    if (!this.tty) return;
    const now = Date.now();
    if (done < this.total && now - this.last < 100) return;
    this.last = now;
    const width = 30;
    const filled = this.total ? Math.round((done / this.total) * width) : width;
    const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
    process.stderr.write(`\r${this.label} [${bar}] ${done}/${this.total}${failed ? `, ${failed} failed` : ''}\x1b[K`);
  }

  finish(): void {
    if (this.tty) process.stderr.write('\n');
  }
}

// A live one-line progress bar for a terminal, redrawn in place with `\r`, at most once per interval
// (100 ms), however fast results arrive. Lines printed meanwhile (one per finished task) are buffered
// and written above the bar at the next redraw, so the bar always stays the last line:
//
//   [##########--------------]  212/500 done · 3 failed · 64 running · 151/s · ETA 2s
//
// Rendering is a pure function; the clock and the timer are injected so tests run on virtual time.

export interface ProgressCounts {
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly running: number;
  /** Done before this run (a resumed backfill): counted as done, not in the rate. */
  readonly skipped?: number;
  /** Rows written so far, when the work reports rows: shown as a rate. */
  readonly rows?: number;
  /** What the counts count (default "done"), e.g. "blocks". */
  readonly unit?: string;
}

const BAR_WIDTH = 24;
/** ANSI: carriage return + erase the whole line. */
const CLEAR_LINE = '\r\x1b[2K';

export function renderProgressBar(c: ProgressCounts, elapsedMs: number, width = BAR_WIDTH): string {
  const skipped = c.skipped ?? 0;
  const ran = c.succeeded + c.failed;
  const done = ran + skipped;
  const filled = c.total === 0 ? width : Math.min(width, Math.floor((done / c.total) * width));
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  const count = `${String(done).padStart(String(c.total).length)}/${c.total} ${c.unit ?? 'done'}`;
  const rate = elapsedMs > 0 ? (ran * 1000) / elapsedMs : 0;
  const parts = [`${bar} ${count}`];
  if (skipped > 0) parts.push(`${skipped} skipped`);
  parts.push(`${c.failed} failed`, `${c.running} running`, `${formatRate(rate)}/s`);
  if (c.rows !== undefined) {
    parts.push(`${formatRate(elapsedMs > 0 ? (c.rows * 1000) / elapsedMs : 0)} rows/s`);
  }
  if (done < c.total) parts.push(`ETA ${rate > 0 ? formatDuration(((c.total - done) / rate) * 1000) : '?'}`);
  return parts.join(' · ');
}

export function formatRate(perSecond: number): string {
  return perSecond >= 100 ? String(Math.round(perSecond)) : perSecond.toFixed(1);
}

export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m}m${String(s % 60).padStart(2, '0')}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export interface ProgressLineOptions {
  readonly intervalMs?: number;
  /** UTC ms (default Date.now). */
  readonly clock?: () => number;
  /** Arms a one-shot timer; returns its canceller (default setTimeout). */
  readonly schedule?: (fn: () => void, ms: number) => () => void;
}

export class ProgressLine {
  private readonly intervalMs: number;
  private readonly clock: () => number;
  private readonly schedule: (fn: () => void, ms: number) => () => void;
  private readonly startedAt: number;
  private counts: ProgressCounts;
  private pendingLines: string[] = [];
  private lastDrawAt = Number.NEGATIVE_INFINITY;
  private cancelTimer: (() => void) | undefined;
  private finished = false;

  constructor(
    private readonly write: (text: string) => void,
    total: number,
    opts: ProgressLineOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 100;
    this.clock = opts.clock ?? Date.now;
    this.schedule =
      opts.schedule ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        return () => clearTimeout(t);
      });
    this.startedAt = this.clock();
    this.counts = { total, succeeded: 0, failed: 0, running: 0 };
  }

  /** New counts; the bar shows them at the next redraw. */
  update(counts: ProgressCounts): void {
    this.counts = counts;
    this.requestDraw();
  }

  /** A line (with its newline) to show above the bar. */
  print(line: string): void {
    this.pendingLines.push(line);
    this.requestDraw();
  }

  /** Writes what is pending, removes the bar and stops redrawing. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.write(CLEAR_LINE + this.pendingLines.join(''));
    this.pendingLines = [];
  }

  private requestDraw(): void {
    if (this.finished || this.cancelTimer !== undefined) return;
    const wait = Math.max(0, this.lastDrawAt + this.intervalMs - this.clock());
    this.cancelTimer = this.schedule(() => {
      this.cancelTimer = undefined;
      this.draw();
    }, wait);
  }

  private draw(): void {
    if (this.finished) return;
    const now = this.clock();
    this.lastDrawAt = now;
    const lines = this.pendingLines.join('');
    this.pendingLines = [];
    this.write(CLEAR_LINE + lines + renderProgressBar(this.counts, now - this.startedAt));
  }
}

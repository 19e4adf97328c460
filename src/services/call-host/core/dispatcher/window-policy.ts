// The window policy: how many of a task's calls may execute at once. It is TCP's shape (slow start,
// then additive increase / multiplicative decrease), chosen because it needs no clock and O(1) state:
//
//   start      window = min(initialWindow, cap) (16 by default); threshold = cap.
//   success    below the threshold (slow start): window + 1 per completed call, so the window doubles
//              once per window of successes (16 → 32 → 64 ...); at or above it (steady): window + 1
//              per `window` successes.
//   retryable  window = max(floor(window / 2), minWindow) and threshold = that window, at most once
//   failure    per generation: only an attempt dispatched after the previous decrease can trigger the
//              next one, so a burst of failures from one cause (an executor crash failing 1,024
//              attempts) halves once, not ten times.
//   terminal   failures that will not be retried (a user error) say nothing about load: no change.
//
// The cap (`taskMaxInflightCalls`) bounds the window, so the executing count never exceeds it.

/** Per-task window state. */
export interface WindowState {
  window: number;
  /** Slow start below it, additive increase at or above it. */
  threshold: number;
  /** Successes counted towards the next +1 in additive increase. */
  growthCredit: number;
  /** Dispatch sequence number at the last decrease; attempts dispatched at or before it do not shrink. */
  lastShrinkSeq: number;
}

export function initialWindowState(initial: number, cap: number): WindowState {
  return { window: Math.max(1, Math.min(initial, cap)), threshold: cap, growthCredit: 0, lastShrinkSeq: 0 };
}

/** A call completed successfully. */
export function growWindow(w: WindowState, cap: number): void {
  if (w.window >= cap) return;
  if (w.window < w.threshold) {
    w.window += 1;
  } else if (++w.growthCredit >= w.window) {
    w.growthCredit = 0;
    w.window += 1;
  }
}

/**
 * An attempt dispatched with sequence number `attemptSeq` failed retryably; `currentSeq` is the task's
 * latest dispatch sequence number. Returns true when the window was halved.
 */
export function shrinkWindow(
  w: WindowState,
  attemptSeq: number,
  currentSeq: number,
  minWindow: number,
): boolean {
  if (attemptSeq <= w.lastShrinkSeq) return false;
  w.window = Math.max(minWindow, Math.floor(w.window / 2));
  w.threshold = w.window;
  w.growthCredit = 0;
  w.lastShrinkSeq = currentSeq;
  return true;
}

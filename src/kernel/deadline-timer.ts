// The one OS-timer driver of a Sans-IO core (docs/architecture.md § The shape of a service: timers are
// data). The core keeps a table of deadlines and answers `nextDeadline()`; after each step its driver calls
// `arm(core.nextDeadline(), now)`, and the single OS timer behind it is replaced only when that deadline
// changes (undefined = nothing due: no timer). When it fires it calls `onFire`, which feeds the core a tick
// and arms again. `scanEvery(ms)` adds a fixed interval calling `onFire` too, a safety net for a driver
// that wants one (the Worker's `timerScanMs`).
//
// Timers are unref'd unless `keepAlive`: a service is kept alive by its server, not by its timers; a client
// waiting out a retry backoff is kept alive by its timer. `stop()` is final: nothing fires or arms after it.
//
// Users: the Worker's orchestrator (src/services/worker/adapters/orchestration/orchestrator.ts) and the
// chain RPC client (src/services/chain-rpc/adapters/rpc-client.ts). The call host keeps its own
// (src/services/call-host/adapters/call-runner-timer.ts): it re-arms once per event-loop turn, only when the
// deadline moved earlier, on the per-call hot path.

/** Where the OS timers come from (injected by tests). */
export interface TimerHost {
  setTimeout(fire: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
  setInterval(fire: () => void, everyMs: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface DeadlineTimerOptions {
  /** Keep the process alive while a timer is armed. Default false (unref'd). */
  readonly keepAlive?: boolean;
  /** Default: Node's timers. */
  readonly host?: TimerHost;
}

/** The longest delay Node's timers take (2^31 − 1 ms); a later deadline is re-armed when this fires. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** Node's timers, unref'd unless `keepAlive`. */
export function nodeTimers(keepAlive: boolean): TimerHost {
  const held = <T extends NodeJS.Timeout>(t: T): T => (keepAlive ? t : t.unref());
  return {
    setTimeout: (fire, ms) => held(setTimeout(fire, ms)),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    setInterval: (fire, ms) => held(setInterval(fire, ms)),
    clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
  };
}

export class DeadlineTimer {
  private readonly host: TimerHost;
  private stopped = false;
  private timer: unknown = undefined;
  private armedAt: number | undefined = undefined;
  private scan: unknown = undefined;

  constructor(
    private readonly onFire: () => void,
    options: DeadlineTimerOptions = {},
  ) {
    this.host = options.host ?? nodeTimers(options.keepAlive ?? false);
  }

  /** Makes the one timer fire at `deadline` (absolute ms, the clock of `now`; undefined = nothing due). */
  arm(deadline: number | undefined, now: number): void {
    if (this.stopped || deadline === this.armedAt) return;
    this.clearTimer();
    this.armedAt = deadline;
    if (deadline === undefined) return;
    const delay = Math.min(Math.max(0, Math.ceil(deadline - now)), MAX_TIMER_DELAY_MS);
    this.timer = this.host.setTimeout(() => {
      this.timer = undefined;
      this.armedAt = undefined;
      this.onFire();
    }, delay);
  }

  /** Also calls `onFire` every `everyMs` until `stop()` (once; a second call changes nothing). */
  scanEvery(everyMs: number): void {
    if (this.stopped || this.scan !== undefined) return;
    this.scan = this.host.setInterval(this.onFire, everyMs);
  }

  /** Clears both timers; nothing fires or arms after this. */
  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.armedAt = undefined;
    if (this.scan !== undefined) this.host.clearInterval(this.scan);
    this.scan = undefined;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.host.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

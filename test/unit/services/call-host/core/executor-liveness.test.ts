// The Executor liveness decision (core/health/executor-liveness.ts) on virtual time: a silent Executor
// is lost only after a confirm; a Worker that was itself paused restarts the clock instead.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INITIAL_LIVENESS,
  judgeLiveness,
  recordIdleCheck,
  stallGapFor,
  type LivenessConfig,
  type LivenessObservation,
  type LivenessState,
} from '../../../../../src/services/call-host/core/executor-liveness.js';

const CFG: LivenessConfig = {
  heartbeatTimeoutMs: 1_000,
  startTimeoutMs: 5_000,
  checkIntervalMs: 250,
  stallGapMs: stallGapFor(250, 1_000), // 750
};

type Obs = Omit<LivenessObservation, 'phase'> & { phase?: LivenessObservation['phase'] };

/** Runs observations in order; returns each verdict kind. */
function run(observations: readonly Obs[], state: LivenessState = INITIAL_LIVENESS): string[] {
  const kinds: string[] = [];
  let s = state;
  for (const o of observations) {
    const step = judgeLiveness(s, { phase: 'check', ...o }, CFG);
    s = step.state;
    kinds.push(step.verdict.kind);
  }
  return kinds;
}

const ready = (now: number, lastHeartbeatAtMs: number, phase?: 'check' | 'confirm'): Obs => ({
  now,
  ready: true,
  lastHeartbeatAtMs,
  spawnedAtMs: 0,
  ...(phase ? { phase } : {}),
});

/** The executor's last heartbeat was at 0; the worker checks on schedule until it suspects it. */
const SILENT_UNTIL_SUSPECT = [250, 500, 750, 1_000, 1_250].map((now) => ready(now, 0));
const SUSPECT_VERDICTS = ['alive', 'alive', 'alive', 'alive', 'suspect'];

describe('stallGapFor', () => {
  it.each([
    [250, 1_000, 750],
    [500, 3_000, 1_500],
    [50, 100, 150],
  ])('interval %s, timeout %s → %s', (interval, timeout, gap) => {
    expect(stallGapFor(interval, timeout)).toBe(gap);
  });
});

describe('judgeLiveness', () => {
  it.each<[string, Obs[], string[]]>([
    ['heartbeats on time', [ready(250, 200), ready(500, 450), ready(750, 700)], ['alive', 'alive', 'alive']],
    [
      'exactly at the timeout: alive',
      [ready(250, 0), ready(500, 0), ready(750, 0), ready(1_000, 0)],
      ['alive', 'alive', 'alive', 'alive'],
    ],
    [
      'silent executor, worker on schedule: suspect, then lost on confirm',
      [...SILENT_UNTIL_SUSPECT, ready(1_250, 0, 'confirm')],
      [...SUSPECT_VERDICTS, 'lost'],
    ],
    [
      'suspect, but the drained socket had a heartbeat: alive on confirm',
      [...SILENT_UNTIL_SUSPECT, ready(1_250, 1_240, 'confirm')],
      [...SUSPECT_VERDICTS, 'alive'],
    ],
    [
      // The measured incident: the worker is SIGSTOPped 15 s; its first tick after SIGCONT comes before
      // the socket is read, so the last heartbeat it knows of is 15 s old.
      'worker paused 15 s: worker-stalled, clock restarted, not lost',
      [ready(250, 200), ready(15_500, 200), ready(15_750, 15_700)],
      ['alive', 'worker-stalled', 'alive'],
    ],
    [
      'worker paused, and the executor really died meanwhile: lost one timeout after resuming',
      [
        ready(250, 200),
        ready(15_500, 200),
        ready(15_750, 200),
        ready(16_000, 200),
        ready(16_250, 200),
        ready(16_500, 200),
        ready(16_750, 200),
        ready(16_750, 200, 'confirm'),
      ],
      ['alive', 'worker-stalled', 'alive', 'alive', 'alive', 'alive', 'suspect', 'lost'],
    ],
    [
      'never ready: lost after the start timeout (confirmed)',
      [
        { now: 250, ready: false, lastHeartbeatAtMs: undefined, spawnedAtMs: 0 },
        ...Array.from({ length: 20 }, (_, i) => ({
          now: 500 + i * 250,
          ready: false,
          lastHeartbeatAtMs: undefined,
          spawnedAtMs: 0,
        })),
        { now: 5_250, ready: false, lastHeartbeatAtMs: undefined, spawnedAtMs: 0, phase: 'confirm' as const },
      ],
      ['alive', ...Array.from({ length: 19 }, () => 'alive'), 'suspect', 'lost'],
    ],
  ])('%s', (_name, observations, expected) => {
    expect(run(observations)).toEqual(expected);
  });

  it.each<[string, boolean, string]>([
    // Issue 31: the executor died at 1 000 and the next one started after a 3.2 s backoff; the watchdog
    // ticked on schedule all along. Its first check of the new executor is not a worker stall.
    ['ticks during the restart backoff are recorded: the new executor is alive', true, 'alive'],
    ['without them the backoff would read as a 3.5 s stall', false, 'worker-stalled'],
  ])('%s', (_name, recordTicks, expected) => {
    let s = judgeLiveness(INITIAL_LIVENESS, { phase: 'check', ...ready(1_000, 900) }, CFG).state;
    for (let now = 1_250; now <= 4_250; now += 250) if (recordTicks) s = recordIdleCheck(s, now);
    const spawnedAtMs = 4_300;
    const first = judgeLiveness(
      s,
      { phase: 'check', now: 4_500, ready: false, lastHeartbeatAtMs: undefined, spawnedAtMs },
      CFG,
    );
    expect(first.verdict.kind).toBe(expected);
  });

  it('an idle tick judges nothing and keeps the stall clock', () => {
    const s = recordIdleCheck({ lastCheckAtMs: 100, resumedAtMs: 50 }, 350);
    expect(s).toEqual({ lastCheckAtMs: 350, resumedAtMs: 50 });
  });

  it('a confirm does not move the check clock', () => {
    const first = judgeLiveness(INITIAL_LIVENESS, { phase: 'check', ...ready(250, 200) }, CFG).state;
    const confirmed = judgeLiveness(first, { phase: 'confirm', ...ready(5_000, 200) }, CFG).state;
    expect(confirmed).toEqual(first);
  });

  it('property: a check never says lost, and a worker whose ticks were on time is never excused', () => {
    const tick = fc.record({ gap: fc.integer({ min: 1, max: 5_000 }), heartbeat: fc.boolean() });
    fc.assert(
      fc.property(fc.array(tick, { maxLength: 60 }), (ticks) => {
        let s = INITIAL_LIVENESS;
        let now = 0;
        let last = 0;
        for (const t of ticks) {
          now += t.gap;
          if (t.heartbeat) last = now;
          const step = judgeLiveness(s, { phase: 'check', ...ready(now, last) }, CFG);
          expect(step.verdict.kind).not.toBe('lost');
          if (step.verdict.kind === 'worker-stalled') expect(t.gap).toBeGreaterThan(CFG.stallGapMs);
          const confirm = judgeLiveness(step.state, { phase: 'confirm', ...ready(now, last) }, CFG);
          // Silent for longer than the timeout since max(last heartbeat, last stall) ⇒ lost on confirm.
          if (confirm.verdict.kind === 'lost')
            expect(now - Math.max(last, step.state.resumedAtMs)).toBeGreaterThan(1_000);
          s = step.state;
        }
      }),
    );
  });
});

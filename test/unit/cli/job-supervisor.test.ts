// The supervisor of configured jobs (src/cli/job-supervisor.ts) against a fake run, on virtual time: a
// failed run is started again after the backoff, doubling per failure in a row; a long healthy run resets
// the row; exit 0 (a stop asked for) is not restarted; a stop during the wait ends it; a job another runner
// holds ends it when the caller does not wait for the lock.
import { describe, expect, it } from 'vitest';
import { superviseJob, type RunHooks } from '../../../src/cli/job-supervisor.js';
import type { CliIo } from '../../../src/cli/io.js';

const JOB = { restartInitialBackoffMs: 100, restartMaxBackoffMs: 1000 };

interface Step {
  /** How long the run lasts (virtual ms). */
  readonly ms: number;
  readonly code?: number;
  readonly throws?: string;
  /** The run finds the job held by another runner and never follows. */
  readonly held?: boolean;
}

async function supervise(steps: Step[], opts: { exitWhenHeld?: boolean; stopAfterRuns?: number } = {}) {
  let now = 0;
  const waits: number[] = [];
  const starts: number[] = [];
  const restarts: (number | undefined)[] = [];
  const lines: string[] = [];
  const stop = new AbortController();
  const io = { stdout: () => {}, stderr: (t: string) => void lines.push(t.trim()) } as unknown as CliIo;
  let i = 0;
  const code = await superviseJob({
    name: 'j',
    job: JOB,
    io,
    signals: { stop: stop.signal, cancel: new AbortController().signal },
    clock: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
    ...(opts.exitWhenHeld ? { exitWhenHeld: true } : {}),
    runOnce: async (hooks: RunHooks) => {
      const step = steps[i++];
      if (step === undefined) throw new Error('ran more often than the test allows');
      starts.push(now);
      restarts.push(hooks.restarts);
      now += step.ms;
      if (opts.stopAfterRuns === i) stop.abort();
      if (step.held) hooks.observer?.leaseHeld?.('fl-x', { holder: 'h', info: 'other', untilMs: 0 });
      else hooks.observer?.following?.('fl-x');
      if (step.throws !== undefined) throw new Error(step.throws);
      return step.code ?? 0;
    },
  });
  return { code, waits, starts, restarts, lines, runs: i };
}

describe('superviseJob', () => {
  it('restarts a failing run with a delay that doubles up to the maximum, and stops at exit 0', async () => {
    const r = await supervise([
      { ms: 5, code: 1 },
      { ms: 5, throws: 'database unreachable' },
      { ms: 5, code: 1 },
      { ms: 5, code: 1 },
      { ms: 5, code: 1 },
      { ms: 5, code: 0 },
    ]);
    expect(r.code).toBe(0);
    expect(r.waits).toEqual([100, 200, 400, 800, 1000]);
    // Each run is told how often it was started again before (it publishes the count: etcd-job-status.ts).
    expect(r.restarts).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.lines[1]).toBe('job j: the runner failed: database unreachable');
    expect(r.lines.at(-1)).toBe('job j: the runner exited 1; restarting in 1000 ms (5 failure(s) in a row)');
  });

  it('starts a new row after a run that lasted the maximum', async () => {
    const r = await supervise([
      { ms: 5, code: 1 },
      { ms: 5, code: 1 },
      { ms: 1000, code: 1 },
      { ms: 5, code: 1 },
      { ms: 5, code: 0 },
    ]);
    expect(r.waits).toEqual([100, 200, 100, 200]);
  });

  it('does not restart a run that ended because the supervisor was stopped, whatever its code', async () => {
    const r = await supervise([{ ms: 5, code: 1 }], { stopAfterRuns: 1 });
    expect(r).toMatchObject({ code: 1, runs: 1, waits: [] });
  });

  it('with exitWhenHeld, a run that found the job held ends it; a held job that later followed does not', async () => {
    const held = await supervise([{ ms: 5, code: 1, held: true }], { exitWhenHeld: true });
    expect(held).toMatchObject({ code: 1, runs: 1, waits: [] });
    const waited = await supervise([
      { ms: 5, code: 1, held: true },
      { ms: 5, code: 0 },
    ]);
    expect(waited).toMatchObject({ code: 0, runs: 2, waits: [100] });
  });
});

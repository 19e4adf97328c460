// The RunTasks credit core (core/run-stream.ts, docs/batched-protocol.md § Worker): scenarios as
// tables, then random interleavings of a client, the stream and task completions (fast-check) checking
// that credits are never exceeded, every credit comes back exactly once, and every admitted id gets
// exactly one terminal update.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_TASKS } from '../../../../../src/kernel/input-bounds.js';
import {
  RunStream,
  RunStreamInputError,
  type AdmissionOutcome,
} from '../../../../../src/services/worker/core/index.js';

interface Adm {
  readonly taskId: string;
  readonly outcome: AdmissionOutcome;
}
type Upd = string;

const stream = (window: number, extra: { maxOverCreditRun?: number; maxBatchTasks?: number } = {}) => {
  const s = new RunStream<Adm, Upd>({ window, ...extra });
  s.takeMessage(); // the opening grant
  return s;
};

/** One submission through the core: credit check, then the admission with `outcome`. */
function submit(s: RunStream<Adm, Upd>, taskId: string, outcome: AdmissionOutcome) {
  const verdict = s.submissionReceived();
  if (verdict.type === 'FailStream') return verdict;
  const actual = verdict.type === 'RefuseNoCredit' ? 'Refused' : outcome;
  return { credit: verdict.type, decided: s.admissionDecided(taskId, actual, { taskId, outcome: actual }) };
}

describe('RunStream scenarios', () => {
  it('opens with one message granting the window, then has nothing to send', () => {
    const s = new RunStream<Adm, Upd>({ window: 4 });
    expect(s.hasQueued).toBe(true);
    expect(s.takeMessage()).toEqual({ credits: 4, admissions: [], updates: [] });
    expect(s.takeMessage()).toBeUndefined();
    expect(s.stats()).toMatchObject({ window: 4, balance: 4, inFlight: 0 });
    expect(s.checkInvariants()).toEqual([]);
  });

  it.each<[string, AdmissionOutcome, string, number, number]>([
    // name, outcome, verdict, credits back with the admission, tasks in flight after
    ['admitted RUNNING: holds its credit until the terminal update', 'Running', 'Watch', 0, 1],
    ['a retained result: credit back at once, nothing follows', 'Terminal', 'Answered', 1, 0],
    ['refused by SubmitTask: credit back at once, nothing follows', 'Refused', 'Answered', 1, 0],
  ])('%s', (_name, outcome, verdict, creditsBack, inFlight) => {
    const s = stream(2);
    expect(s.requestReceived(1)).toEqual({ type: 'Accept' });
    expect(submit(s, 't1', outcome)).toEqual({ credit: 'Admit', decided: { type: verdict } });
    expect(s.takeMessage()).toEqual({
      credits: creditsBack,
      admissions: [{ taskId: 't1', outcome }],
      updates: [],
    });
    expect(s.stats()).toMatchObject({ balance: 2 - 1 + creditsBack, inFlight });
    expect(s.checkInvariants()).toEqual([]);
  });

  it('a terminal update returns the credit of its in-flight task, once', () => {
    const s = stream(1);
    submit(s, 't1', 'Running');
    s.takeMessage();
    expect(s.terminal('t1', 'done t1', 10)).toBe(true);
    expect(s.terminal('t1', 'again', 10)).toBe(false);
    expect(s.terminal('unknown', 'x', 10)).toBe(false);
    expect(s.takeMessage()).toEqual({ credits: 1, admissions: [], updates: ['done t1'] });
    expect(s.stats()).toMatchObject({ balance: 1, inFlight: 0 });
  });

  it('a duplicate of a task in flight answers RUNNING without holding a second credit or a second update', () => {
    const s = stream(3);
    submit(s, 't1', 'Running');
    expect(submit(s, 't1', 'Running')).toEqual({ credit: 'Admit', decided: { type: 'Duplicate' } });
    // The duplicate's credit comes back with its admission; the first keeps one until its update.
    expect(s.takeMessage()?.credits).toBe(1);
    expect(s.stats()).toMatchObject({ balance: 2, inFlight: 1 });
    expect(s.terminal('t1', 'u', 1)).toBe(true);
    expect(s.terminal('t1', 'u', 1)).toBe(false);
    expect(s.takeMessage()).toEqual({ credits: 1, admissions: [], updates: ['u'] });
    // After its terminal update the id may be admitted (and watched) again.
    expect(submit(s, 't1', 'Running')).toMatchObject({ decided: { type: 'Watch' } });
  });

  it('refuses a submission beyond the credits per task (no credit taken or returned), and the stream lives', () => {
    const s = stream(1);
    expect(submit(s, 'a', 'Running')).toMatchObject({ credit: 'Admit' });
    const refused = s.submissionReceived();
    expect(refused).toEqual({ type: 'RefuseNoCredit', window: 1 });
    expect(s.admissionDecided('b', 'Refused', { taskId: 'b', outcome: 'Refused' })).toEqual({
      type: 'Answered',
    });
    expect(s.takeMessage()).toEqual({
      credits: 0,
      admissions: [
        { taskId: 'a', outcome: 'Running' },
        { taskId: 'b', outcome: 'Refused' },
      ],
      updates: [],
    });
    expect(s.checkInvariants()).toEqual([]);
    expect(s.closed).toBe(false);
  });

  it('fails the stream after more than `window` submissions in a row without credit; a paid one resets the run', () => {
    const s = stream(2);
    submit(s, 'a', 'Running');
    submit(s, 'b', 'Running');
    expect(submit(s, 'c', 'Running')).toMatchObject({ credit: 'RefuseNoCredit' });
    expect(submit(s, 'd', 'Running')).toMatchObject({ credit: 'RefuseNoCredit' });
    s.terminal('a', 'ua', 1);
    s.takeMessage();
    expect(submit(s, 'e', 'Refused')).toMatchObject({ credit: 'Admit' });
    s.takeMessage(); // e's credit back
    expect(submit(s, 'f', 'Running')).toMatchObject({ credit: 'Admit' });
    for (const id of ['g', 'h']) expect(submit(s, id, 'Running')).toMatchObject({ credit: 'RefuseNoCredit' });
    expect(s.submissionReceived()).toEqual({
      type: 'FailStream',
      reason: 'CreditViolation',
      message: '3 tasks in a row sent without a credit (credit window 2)',
    });
    expect(s.closed).toBe(true);
    expect(s.takeMessage()).toBeUndefined();
  });

  it.each([
    [MAX_BATCH_TASKS, 'Accept'],
    [MAX_BATCH_TASKS + 1, 'FailStream'],
  ])('a request of %i tasks: %s', (count, verdict) => {
    const s = stream(1);
    const v = s.requestReceived(count);
    expect(v.type).toBe(verdict);
    if (v.type === 'FailStream') {
      expect(v.reason).toBe('BatchTooLarge');
      expect(v.message).toContain(`at most ${MAX_BATCH_TASKS} tasks`);
    }
  });

  it('splits updates by bytes, each message carrying the credits of its own updates', () => {
    const s = stream(4);
    for (const id of ['a', 'b', 'c', 'd']) submit(s, id, 'Running');
    s.takeMessage();
    for (const id of ['a', 'b', 'c']) s.terminal(id, id, 600);
    expect(s.takeMessage(1_000)).toEqual({ credits: 1, admissions: [], updates: ['a'] });
    expect(s.takeMessage(1_300)).toEqual({ credits: 2, admissions: [], updates: ['b', 'c'] });
    // One update larger than the budget still goes, alone.
    s.terminal('d', 'd', 5_000);
    expect(s.takeMessage(1_000)).toEqual({ credits: 1, admissions: [], updates: ['d'] });
  });

  it('admissions of a request leave with the updates that fit', () => {
    const s = stream(2);
    submit(s, 'a', 'Running');
    s.takeMessage();
    s.terminal('a', 'ua', 10);
    submit(s, 'b', 'Refused');
    expect(s.takeMessage(1_000)).toEqual({
      credits: 2,
      admissions: [{ taskId: 'b', outcome: 'Refused' }],
      updates: ['ua'],
    });
  });

  it('is finished once the client half-closed and every outcome was taken', () => {
    const s = stream(2);
    submit(s, 'a', 'Running');
    s.takeMessage();
    s.inputEnded();
    expect(s.finished).toBe(false);
    s.terminal('a', 'ua', 1);
    expect(s.finished).toBe(false);
    s.takeMessage();
    expect(s.finished).toBe(true);
  });

  it('close() hands back the ids still in flight and sends nothing more', () => {
    const s = stream(3);
    submit(s, 'a', 'Running');
    submit(s, 'b', 'Running');
    s.terminal('a', 'ua', 1);
    expect(s.close()).toEqual(['b']);
    expect(s.terminal('b', 'ub', 1)).toBe(false);
    expect(s.hasQueued).toBe(false);
    expect(s.takeMessage()).toBeUndefined();
  });

  it.each<[string, (s: RunStream<Adm, Upd>) => unknown]>([
    [
      'a decision without a submission',
      (s) => s.admissionDecided('a', 'Running', { taskId: 'a', outcome: 'Running' }),
    ],
    [
      'two submissions without a decision',
      (s) => {
        s.submissionReceived();
        s.submissionReceived();
      },
    ],
    ['a request after the half-close', (s) => (s.inputEnded(), s.requestReceived(1))],
    [
      'RUNNING for a submission that had no credit',
      (s) => {
        s.submissionReceived();
        s.admissionDecided('a', 'Refused', { taskId: 'a', outcome: 'Refused' });
        s.submissionReceived();
        s.admissionDecided('b', 'Running', { taskId: 'b', outcome: 'Running' });
      },
    ],
  ])('throws RunStreamInputError on illegal input: %s', (_name, misuse) => {
    expect(() => misuse(stream(1))).toThrow(RunStreamInputError);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects a window of %s', (window) => {
    expect(() => new RunStream({ window })).toThrow(RunStreamInputError);
  });
});

// ---- Random interleavings ---------------------------------------------------------------------------

type Action =
  | { readonly type: 'send'; readonly ids: readonly number[]; readonly outcomes: readonly AdmissionOutcome[] }
  | { readonly type: 'process' }
  | { readonly type: 'complete'; readonly pick: number }
  | { readonly type: 'flush'; readonly budget: number }
  | { readonly type: 'receive' };

const outcomeArb = fc.constantFrom<AdmissionOutcome>('Running', 'Running', 'Terminal', 'Refused');
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.integer({ min: 1, max: 6 }).chain((n) =>
    fc.record({
      type: fc.constant('send' as const),
      ids: fc.array(fc.integer({ min: 0, max: 7 }), { minLength: n, maxLength: n }),
      outcomes: fc.array(outcomeArb, { minLength: n, maxLength: n }),
    }),
  ),
  fc.constant({ type: 'process' as const }),
  fc.record({ type: fc.constant('complete' as const), pick: fc.nat() }),
  fc.record({ type: fc.constant('flush' as const), budget: fc.integer({ min: 1, max: 40 }) }),
  fc.constant({ type: 'receive' as const }),
);

/** A client, the stream core and the tasks it watches, connected by two FIFO channels. */
class Simulation {
  readonly s: RunStream<Adm, Upd>;
  /** The client's credits as it counts them (received minus sent). */
  clientBalance = 0;
  private readonly toServer: { taskId: string; outcome: AdmissionOutcome }[][] = [];
  private readonly toClient: { credits: number; admissions: readonly Adm[]; updates: readonly Upd[] }[] = [];
  /** Tasks the core said to watch and whose terminal update was not fed yet. */
  private readonly watched: string[] = [];
  paid = 0;
  creditsSent = 0;
  noCreditRefusals = 0;
  readonly watchesPerId = new Map<string, number>();
  readonly updatesPerId = new Map<string, number>();
  failed = false;

  constructor(
    readonly window: number,
    /** An honest client sends only what its credits allow. */
    readonly honest: boolean,
  ) {
    this.s = new RunStream<Adm, Upd>({ window });
  }

  run(a: Action): void {
    if (this.failed) return;
    switch (a.type) {
      case 'send': {
        let n = a.ids.length;
        if (this.honest) n = Math.min(n, this.clientBalance);
        if (n === 0) return;
        this.clientBalance -= n;
        this.toServer.push(
          a.ids.slice(0, n).map((id, i) => ({ taskId: `t${id}`, outcome: a.outcomes[i] ?? 'Running' })),
        );
        return;
      }
      case 'process': {
        const req = this.toServer.shift();
        if (req === undefined) return;
        if (this.s.requestReceived(req.length).type === 'FailStream') return this.fail();
        for (const sub of req) {
          const verdict = this.s.submissionReceived();
          if (verdict.type === 'FailStream') return this.fail();
          if (verdict.type === 'RefuseNoCredit') this.noCreditRefusals++;
          else this.paid++;
          // A task already in flight on this stream can only answer RUNNING (SubmitTask is idempotent).
          const outcome =
            verdict.type === 'RefuseNoCredit'
              ? 'Refused'
              : this.s.isInFlight(sub.taskId)
                ? 'Running'
                : sub.outcome;
          const decided = this.s.admissionDecided(sub.taskId, outcome, { taskId: sub.taskId, outcome });
          if (decided.type === 'Watch') {
            this.watched.push(sub.taskId);
            this.watchesPerId.set(sub.taskId, (this.watchesPerId.get(sub.taskId) ?? 0) + 1);
          }
        }
        this.take(Number.POSITIVE_INFINITY);
        return;
      }
      case 'complete': {
        if (this.watched.length === 0) return;
        const [taskId] = this.watched.splice(a.pick % this.watched.length, 1) as [string];
        expect(this.s.terminal(taskId, taskId, 1)).toBe(true);
        return;
      }
      case 'flush':
        this.take(a.budget);
        return;
      case 'receive': {
        const msg = this.toClient.shift();
        if (msg === undefined) return;
        this.clientBalance += msg.credits;
        for (const u of msg.updates) this.updatesPerId.set(u, (this.updatesPerId.get(u) ?? 0) + 1);
        return;
      }
      default: {
        const unreachable: never = a;
        throw new Error(`unknown action ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** Drives everything to quiescence: every request processed, every task finished, every message read. */
  settle(): void {
    for (let i = 0; i < 1_000 && !this.failed; i++) {
      this.run({ type: 'process' });
      this.run({ type: 'complete', pick: 0 });
      this.take(Number.POSITIVE_INFINITY);
      this.run({ type: 'receive' });
    }
  }

  check(): void {
    if (this.failed) return;
    expect(this.s.checkInvariants()).toEqual([]);
    // Credits never exceeded: at most `window` tasks in flight, and the client never holds more
    // credits than the window.
    expect(this.s.stats().inFlight).toBeLessThanOrEqual(this.window);
    expect(this.clientBalance).toBeLessThanOrEqual(this.window);
    // A credit never comes back before (or more often than) it was taken.
    expect(this.creditsSent).toBeLessThanOrEqual(this.window + this.paid);
    if (this.honest) {
      expect(this.clientBalance).toBeGreaterThanOrEqual(0);
      expect(this.noCreditRefusals).toBe(0);
    }
  }

  private take(budget: number): void {
    const msg = this.s.takeMessage(budget);
    if (msg === undefined) return;
    this.creditsSent += msg.credits;
    this.toClient.push(msg);
  }

  private fail(): void {
    this.failed = true;
  }
}

describe('RunStream under random interleavings', () => {
  it('never exceeds the credits, returns every credit exactly once, one terminal update per admitted id', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.boolean(),
        fc.array(actionArb, { maxLength: 120 }),
        (window, honest, actions) => {
          const sim = new Simulation(window, honest);
          for (const a of actions) {
            sim.run(a);
            sim.check();
          }
          sim.settle();
          sim.check();
          if (sim.failed) {
            // Only a client sending beyond its credits can make the stream fail.
            expect(honest).toBe(false);
            return;
          }
          // Quiescent: every taken credit came back exactly once, so the client holds the whole window
          // again, less what it spent without having it (those submissions were refused, paying nothing).
          expect(sim.creditsSent).toBe(window + sim.paid);
          expect(sim.clientBalance).toBe(window - sim.noCreditRefusals);
          expect(sim.s.stats()).toMatchObject({ inFlight: 0, queuedUpdates: 0, queuedAdmissions: 0 });
          // Exactly one terminal update per admission that started a watch.
          expect(Object.fromEntries(sim.updatesPerId)).toEqual(Object.fromEntries(sim.watchesPerId));
        },
      ),
      { numRuns: 500 },
    );
  });
});

// The follow core on virtual time (docs/follow.md): table scenarios of what it runs, re-runs and removes,
// the deep-reorg stop, resuming, and a fast-check property — for any sequence of new blocks and reorgs
// within the finality depth, with reads and task completions interleaved at random, the output the
// commands produce equals the canonical chain once the chain settles.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FollowCore,
  UNKNOWN_HASH,
  type CanonicalBlock,
  type FollowCommand,
  type FollowOptions,
} from '../../../../../src/services/follow/core/follow-core.js';
import {
  FollowErrorCode,
  FollowInputError,
  ReorgBeyondFinalityError,
} from '../../../../../src/services/follow/core/errors.js';

/** A chain of the tables: canonical blocks by height, every hash unique. */
class Chain {
  blocks: CanonicalBlock[] = [];
  private fork = 0;
  constructor(length: number, first = 0) {
    for (let n = first; n < first + length; n++) this.push(n);
  }
  get head(): number | null {
    return this.blocks.at(-1)?.number ?? null;
  }
  private push(n: number): void {
    const parent = this.blocks.at(-1);
    this.blocks.push({ number: n, hash: `0x${n}-${this.fork}`, parentHash: parent?.hash ?? '0x' });
  }
  grow(k: number): void {
    const next = (this.head ?? -1) + 1;
    for (let i = 0; i < k; i++) this.push(next + i);
  }
  /** Replace the top `depth` blocks by `length` new ones (fewer: the chain gets shorter). */
  reorg(depth: number, length: number): void {
    const base = (this.head ?? -1) - depth + 1;
    this.blocks = this.blocks.filter((b) => b.number < base);
    this.fork++;
    for (let i = 0; i < length; i++) this.push(base + i);
  }
  view(lo: number, hi: number): CanonicalBlock[] {
    return this.blocks.filter((b) => b.number >= lo && b.number <= hi);
  }
  hashAt(n: number): string | undefined {
    return this.blocks.find((b) => b.number === n)?.hash;
  }
}

const OPTS: FollowOptions = {
  from: 0,
  finality: 3,
  maxInFlight: 4,
  pollIntervalMs: 1000,
  retryDelayMs: 500,
  pageSize: 50,
  now: 0,
};

/** A driver on virtual time: answers reads from `chain`, applies runs/removes to `output` on commit. */
class Harness {
  core: FollowCore;
  /** What a job store would hold: the last `final` and the applied hash of each committed height. */
  readonly persisted = new Map<number, string>();
  final: { cursor: number; hash: string | null } | undefined;
  readonly output = new Map<number, string>();
  readonly inFlight = new Map<number, Extract<FollowCommand, { type: 'run' | 'remove' }>>();
  read: { lo: number; hi: number } | undefined;
  readonly log: FollowCommand[] = [];
  now = 0;
  constructor(
    readonly chain: Chain,
    opts: Partial<FollowOptions> = {},
  ) {
    this.core = new FollowCore({ ...OPTS, ...opts });
    this.opts = opts;
  }
  private readonly opts: Partial<FollowOptions>;
  /** The driver dies and a new one resumes from the store; the work in flight committed or not. */
  crash(committed: boolean): void {
    for (const c of this.inFlight.values()) {
      if (committed && c.type === 'run') this.output.set(c.height, c.hash);
      if (committed && c.type === 'remove') this.output.delete(c.height);
      this.persisted.set(c.height, UNKNOWN_HASH);
    }
    this.inFlight.clear();
    this.read = undefined;
    const resume = this.final
      ? { cursor: this.final.cursor, finalHash: this.final.hash, applied: this.persisted }
      : { cursor: this.opts.from ?? 0, applied: this.persisted };
    this.core = new FollowCore({ ...OPTS, ...this.opts, now: this.now, resume });
  }
  private take(cmds: FollowCommand[]): FollowCommand[] {
    for (const c of cmds) {
      this.log.push(c);
      if (c.type === 'read') this.read = { lo: c.lo, hi: c.hi };
      if (c.type === 'run' || c.type === 'remove') this.inFlight.set(c.seq, c);
      if (c.type === 'final') this.final = { cursor: c.cursor, hash: c.hash };
    }
    return cmds;
  }
  tick(): FollowCommand[] {
    return this.take(this.core.handle({ type: 'tick', now: this.now }));
  }
  answer(): FollowCommand[] {
    const r = this.read;
    if (r === undefined) throw new Error('no read to answer');
    this.read = undefined;
    return this.take(
      this.core.handle({
        type: 'chain',
        now: this.now,
        ...r,
        head: this.chain.head,
        blocks: this.chain.view(r.lo, r.hi),
      }),
    );
  }
  complete(seq: number, ok = true): FollowCommand[] {
    const c = this.inFlight.get(seq);
    if (c === undefined) throw new Error(`no work ${seq}`);
    this.inFlight.delete(seq);
    if (!ok) return this.take(this.core.handle({ type: 'failed', now: this.now, seq, message: 'boom' }));
    if (c.type === 'run') this.output.set(c.height, c.hash);
    else this.output.delete(c.height);
    if (c.type === 'run') this.persisted.set(c.height, c.hash);
    else this.persisted.delete(c.height);
    return this.take(this.core.handle({ type: 'applied', now: this.now, seq }));
  }
  completeAll(): void {
    while (this.inFlight.size > 0) this.complete(this.inFlight.keys().next().value as number);
  }
  /** Run to quiescence: ticks at deadlines, answers reads, completes work, until many reads find nothing to do. */
  settle(maxSteps = 10_000): void {
    let quiet = 0;
    for (let i = 0; i < maxSteps; i++) {
      if (this.inFlight.size > 0) {
        this.completeAll();
        quiet = 0;
      } else if (this.read) {
        const work = this.answer().some((c) => c.type === 'run' || c.type === 'remove');
        quiet = work ? 0 : quiet + 1;
        if (quiet >= 50) return;
      } else {
        const at = this.core.nextDeadline();
        if (at === undefined) return;
        this.now = Math.max(this.now, at);
        this.tick();
      }
    }
    throw new Error('did not settle');
  }
  /** The output as the canonical chain would have it: height → hash for heights ≥ from. */
  expected(from = 0): Map<number, string> {
    return new Map(this.chain.blocks.filter((b) => b.number >= from).map((b) => [b.number, b.hash]));
  }
}

const runs = (cmds: FollowCommand[]) =>
  cmds.flatMap((c) =>
    c.type === 'run' ? [`run ${c.height} ${c.hash}`] : c.type === 'remove' ? [`remove ${c.height}`] : [],
  );

describe('FollowCore: what to run', () => {
  it('first reads one below the cursor, then runs each canonical height, lowest first, maxInFlight at once', () => {
    const h = new Harness(new Chain(6), { from: 1 });
    expect(h.tick()).toEqual([{ type: 'read', lo: 0, hi: 49 }]);
    expect(runs(h.answer())).toEqual(['run 1 0x1-0', 'run 2 0x2-0', 'run 3 0x3-0', 'run 4 0x4-0']);
    expect(runs(h.complete(2))).toEqual(['run 5 0x5-0']);
    h.settle();
    expect(h.output).toEqual(h.expected(1));
  });

  it('runs new heights as the chain grows, on the next poll', () => {
    const h = new Harness(new Chain(3));
    h.settle();
    h.chain.grow(2);
    const at = h.core.nextDeadline() as number;
    expect(at).toBeGreaterThan(h.now);
    h.now = at;
    expect(h.tick()).toEqual([{ type: 'read', lo: expect.any(Number), hi: expect.any(Number) }]);
    expect(runs(h.answer())).toEqual(['run 3 0x3-0', 'run 4 0x4-0']);
  });

  it('re-runs heights whose canonical hash changed and reports the reorg with its depth', () => {
    const h = new Harness(new Chain(8), { finality: 4 });
    h.settle();
    h.chain.reorg(2, 2);
    h.now += 1000;
    h.tick();
    const cmds = h.answer();
    expect(cmds).toContainEqual({ type: 'reorg', ancestor: 5, depth: 2, oldTip: '0x7-0', newTip: '0x7-1' });
    expect(runs(cmds)).toEqual(['run 6 0x6-1', 'run 7 0x7-1']);
    h.settle();
    expect(h.output).toEqual(h.expected());
  });

  it('removes the outputs of heights that vanished when a reorg shortens the chain', () => {
    const h = new Harness(new Chain(8), { finality: 4 });
    h.settle();
    h.chain.reorg(3, 1);
    h.now += 1000;
    h.tick();
    const cmds = h.answer();
    expect(cmds).toContainEqual({ type: 'reorg', ancestor: 4, depth: 3, oldTip: '0x7-0', newTip: '0x5-1' });
    expect(runs(cmds)).toEqual(['run 5 0x5-1', 'remove 6', 'remove 7']);
    h.settle();
    expect(h.output).toEqual(h.expected());
  });

  it('never has two runs of one height in flight: a changed hash waits for the run on the old one', () => {
    const h = new Harness(new Chain(3), { finality: 5 });
    h.tick();
    h.answer(); // runs 0, 1, 2 in flight
    h.chain.reorg(1, 1);
    h.now += 1000;
    h.tick();
    expect(runs(h.answer())).toEqual([]);
    expect(runs(h.complete(3))).toEqual(['run 2 0x2-1']);
    h.settle();
    expect(h.output).toEqual(h.expected());
  });

  it('retries a failed run after retryDelayMs, keeping what the height had', () => {
    const h = new Harness(new Chain(1), { finality: 5 });
    h.tick();
    h.answer();
    expect(runs(h.complete(1, false))).toEqual([]);
    expect(h.core.nextDeadline()).toBe(500);
    h.now = 500;
    expect(runs(h.tick())).toEqual(['run 0 0x0-0']);
  });

  it('moves the cursor over final, applied heights and says so (final), then reads from one below it', () => {
    const h = new Harness(new Chain(10), { finality: 3 });
    h.settle();
    const finals = h.log.filter((c) => c.type === 'final');
    expect(finals.at(-1)).toEqual({ type: 'final', cursor: 7, hash: '0x6-0' });
    h.now += 1000;
    expect(h.tick()).toEqual([{ type: 'read', lo: 6, hi: 55 }]);
  });

  it('reads a pass page by page up to the head, holding at most finality + pageSize heights', () => {
    const h = new Harness(new Chain(30), { finality: 0, pageSize: 10, maxInFlight: 100 });
    h.tick();
    expect(h.answer()).toContainEqual({ type: 'read', lo: 9, hi: 18 }); // head 29 is above: on at once
    expect(h.answer().filter((c) => c.type === 'read')).toEqual([]); // 19 heights held: capped
    const cmds: FollowCommand[] = [];
    for (const seq of [...h.inFlight.keys()]) cmds.push(...h.complete(seq));
    expect(cmds.filter((c) => c.type === 'read')).toEqual([{ type: 'read', lo: 19, hi: 28 }]);
    h.settle();
    expect(h.output).toEqual(h.expected());
  });
});

describe('FollowCore: finality', () => {
  it('stops on a change to a block it saw final, naming the height and both hashes, and issues nothing more', () => {
    const h = new Harness(new Chain(10), { finality: 2 });
    h.settle();
    h.chain.reorg(5, 5); // replaces 5..9; 7 was final (head 9 − 2)
    h.now += 1000;
    h.tick();
    const cmds = h.answer();
    expect(runs(cmds)).toEqual([]);
    const stop = cmds.find((c) => c.type === 'stop');
    const err = stop?.type === 'stop' ? stop.error : undefined;
    expect(h.core.snapshot().stopped).toBe(err);
    expect(err).toBeInstanceOf(ReorgBeyondFinalityError);
    expect(err).toMatchObject({
      code: 'REORG_BEYOND_FINALITY',
      height: 7,
      finalHash: '0x7-0',
      newHash: '0x7-1',
    });
    expect(err?.message).toContain('block 7');
    expect(h.core.nextDeadline()).toBeUndefined();
    expect(h.core.handle({ type: 'tick', now: h.now + 10_000 })).toEqual([]);
  });

  it('a change within finality of the highest head ever seen is an ordinary reorg, even after the chain shortened', () => {
    const h = new Harness(new Chain(10), { finality: 4 });
    h.settle();
    h.chain.reorg(2, 0); // head 7; final stays ≤ 5 (9 − 4)
    h.now += 1000;
    h.settle();
    h.chain.reorg(2, 3); // replaces 6, 7: above 5
    h.now += 1000;
    h.settle();
    expect(h.core.snapshot().stopped).toBeUndefined();
    expect(h.output).toEqual(h.expected());
  });

  it('checks the block below the cursor when resuming: a change there while the job was down stops it', () => {
    const chain = new Chain(10);
    const h = new Harness(chain, {
      finality: 2,
      resume: { cursor: 5, finalHash: '0x4-old', applied: new Map([[5, '0x5-0']]) },
    });
    h.tick();
    h.answer();
    expect(h.core.snapshot().stopped).toMatchObject({ height: 4, finalHash: '0x4-old', newHash: '0x4-0' });
  });

  it('resumes from a persisted cursor: runs only what differs, and re-runs heights of unknown state', () => {
    const h = new Harness(new Chain(8), {
      finality: 2,
      resume: {
        cursor: 4,
        finalHash: '0x3-0',
        applied: new Map([
          [4, '0x4-0'],
          [5, UNKNOWN_HASH],
          [6, '0x6-0'],
        ]),
      },
    });
    h.tick();
    expect(runs(h.answer())).toEqual(['run 5 0x5-0', 'run 7 0x7-0']);
  });
});

describe('FollowCore: bad input', () => {
  it('refuses options out of range, chain views it did not ask for, and unknown completions', () => {
    expect(() => new FollowCore({ ...OPTS, finality: -1 })).toThrow(FollowInputError);
    const core = new FollowCore(OPTS);
    expect(() => core.handle({ type: 'chain', now: 0, lo: 0, hi: 5, head: null, blocks: [] })).toThrow(
      /answers no read/,
    );
    expect(() => core.handle({ type: 'applied', now: 0, seq: 9 })).toThrow(/no run or remove 9/);
    core.handle({ type: 'tick', now: 0 });
    const b = { number: 0, hash: '0xa', parentHash: '0x' };
    expect(() => core.handle({ type: 'chain', now: 0, lo: -1, hi: 48, head: 0, blocks: [b, b] })).toThrow(
      /two canonical blocks at height 0/,
    );
  });

  it('pins each error code to its key', () => {
    for (const [k, v] of Object.entries(FollowErrorCode)) expect(v).toBe(k);
  });
});

type Op =
  | { kind: 'grow'; k: number }
  | { kind: 'reorg'; depth: number; length: number }
  | { kind: 'answer' }
  | { kind: 'complete'; pick: number; ok: boolean }
  | { kind: 'time'; ms: number }
  | { kind: 'crash'; committed: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('grow' as const), k: fc.integer({ min: 1, max: 3 }) }),
  fc.record({
    kind: fc.constant('reorg' as const),
    depth: fc.integer({ min: 1, max: 6 }),
    length: fc.integer({ min: 0, max: 7 }),
  }),
  fc.record({ kind: fc.constant('answer' as const) }),
  fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(), ok: fc.boolean() }),
  fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 0, max: 1500 }) }),
  fc.record({ kind: fc.constant('crash' as const), committed: fc.boolean() }),
);

describe('FollowCore: property', () => {
  it('for any new blocks, reorgs within finality and driver crashes, the output equals the canonical chain once it settles', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 3, max: 40 }),
        fc.array(opArb, { maxLength: 80 }),
        (finality, from, maxInFlight, pageSize, ops) => {
          const chain = new Chain(4);
          const h = new Harness(chain, { finality, from, maxInFlight, pageSize });
          let maxHead = chain.head ?? -1;
          h.tick();
          for (const op of ops) {
            switch (op.kind) {
              case 'grow':
                chain.grow(op.k);
                break;
              case 'reorg': {
                // Within finality: only blocks above (highest head ever) − finality change.
                const head = chain.head ?? -1;
                const depth = Math.min(op.depth, finality - (maxHead - head), head + 1);
                if (depth > 0) chain.reorg(depth, op.length);
                break;
              }
              case 'answer':
                if (h.read) h.answer();
                break;
              case 'complete': {
                const seqs = [...h.inFlight.keys()];
                if (seqs.length > 0) h.complete(seqs[op.pick % seqs.length] as number, op.ok);
                break;
              }
              case 'time':
                h.now += op.ms;
                h.tick();
                break;
              case 'crash':
                h.crash(op.committed);
                h.tick();
                break;
            }
            maxHead = Math.max(maxHead, chain.head ?? -1);
          }
          h.settle();
          expect(h.core.snapshot().stopped).toBeUndefined();
          expect(h.output).toEqual(h.expected(from));
        },
      ),
      { numRuns: 400 },
    );
  });
});

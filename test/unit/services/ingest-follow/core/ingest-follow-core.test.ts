// The ingest-follow core on virtual time (docs/ingest.md § Following the head): table scenarios — new
// blocks, reorgs of the same length, a chain that gets shorter, a reorg deeper than finality, a node that
// moves between answers, failures, resuming from the store — and a fast-check property: for any sequence of
// new blocks and reorgs within the finality depth, interleaved at random with the core's answers and with
// restarts from the store, once the node stops moving the store's canonical (height, hash) set equals the
// node's canonical chain and every other stored block is marked non-canonical.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  IngestFollowCore,
  type ChainBlock,
  type IngestFollowCommand,
  type IngestFollowInput,
  type IngestFollowOptions,
} from '../../../../../src/services/ingest-follow/core/ingest-follow-core.js';
import {
  IngestFollowErrorCode,
  IngestFollowInputError,
  IngestReorgBeyondFinalityError,
} from '../../../../../src/services/ingest-follow/core/errors.js';

/** The node: its canonical chain from genesis, every hash unique. */
class Node {
  blocks: ChainBlock[] = [];
  private fork = 0;
  constructor(length: number) {
    this.grow(length);
  }
  get head(): ChainBlock {
    return this.blocks.at(-1) as ChainBlock;
  }
  grow(k: number): void {
    for (let i = 0; i < k; i++) {
      const n = this.blocks.length;
      this.blocks.push({
        number: n,
        hash: `0x${n}-${this.fork}`,
        parentHash: this.blocks.at(-1)?.hash ?? '0x',
      });
    }
  }
  /** Replaces the top `depth` blocks by `length` new ones (fewer: the chain gets shorter). */
  reorg(depth: number, length: number): void {
    this.blocks = this.blocks.slice(0, this.blocks.length - depth);
    this.fork++;
    this.grow(length);
  }
}

/** The blocks table: every block written, with its canonical flag. */
class Store {
  readonly rows = new Map<string, { block: ChainBlock; canonical: boolean }>();
  writes = 0;
  canonical(): ChainBlock[] {
    return [...this.rows.values()].filter((r) => r.canonical).map((r) => r.block);
  }
  /** What the writer does for `ingest` (the node's block at that height, if its parent matches). */
  apply(c: IngestFollowCommand, node: Node, now: number): IngestFollowInput {
    if (c.type !== 'ingest' && c.type !== 'orphan') throw new Error(`not a write: ${c.type}`);
    const b = c.type === 'ingest' ? node.blocks[c.height] : undefined;
    if (c.type === 'ingest') {
      if (b === undefined) return { type: 'failed', now, message: `no block ${c.height}` };
      if (c.parentHash !== null && b.parentHash !== c.parentHash) return { type: 'moved', now };
    }
    this.writes++;
    for (const o of c.orphans) {
      const row = this.rows.get(o.hash);
      if (row) row.canonical = false;
    }
    if (b !== undefined) {
      for (const r of this.rows.values()) if (r.block.number === b.number) r.canonical = false;
      this.rows.set(b.hash, { block: b, canonical: true });
    }
    return b === undefined ? { type: 'written', now } : { type: 'written', now, block: b };
  }
}

const OPTS: Omit<IngestFollowOptions, 'now'> = {
  from: 0,
  finality: 4,
  pollIntervalMs: 1000,
  retryDelayMs: 300,
};

/** Drives a core against a node and a store: answers each command as the node and store are now. */
class Harness {
  now = 0;
  core: IngestFollowCore;
  log: IngestFollowCommand[] = [];
  pending: IngestFollowCommand | undefined;
  constructor(
    readonly node: Node,
    readonly store: Store,
    readonly opts: Omit<IngestFollowOptions, 'now'> = OPTS,
  ) {
    this.core = this.fresh();
  }
  fresh(): IngestFollowCore {
    this.pending = undefined;
    return new IngestFollowCore({ ...this.opts, now: this.now, stored: this.store.canonical() });
  }
  feed(input: IngestFollowInput): void {
    for (const c of this.core.handle(input)) {
      this.log.push(c);
      if (['poll-head', 'fetch-header', 'ingest', 'orphan'].includes(c.type)) {
        expect(this.pending, 'one command outstanding at a time').toBeUndefined();
        this.pending = c;
      }
    }
  }
  answer(c: IngestFollowCommand): IngestFollowInput {
    switch (c.type) {
      case 'poll-head':
        return { type: 'head', now: this.now, block: this.node.head };
      case 'fetch-header':
        return { type: 'header', now: this.now, block: this.node.blocks[c.number] ?? null };
      default:
        return this.store.apply(c, this.node, this.now);
    }
  }
  /** Answers the outstanding command, or moves the clock to the next deadline and ticks. */
  step(): void {
    this.now += 10;
    const c = this.pending;
    if (c !== undefined) {
      this.pending = undefined;
      this.feed(this.answer(c));
      return;
    }
    const at = this.core.nextDeadline();
    if (at === undefined) return;
    this.now = Math.max(this.now, at);
    this.feed({ type: 'tick', now: this.now });
  }
  /** Steps until two polls in a row find nothing to write (the core then waits for its next poll). */
  settle(maxSteps = 5000): void {
    let idlePolls = 0;
    for (let i = 0; i < maxSteps && idlePolls < 2; i++) {
      const writes = this.store.writes;
      const polls = this.pending?.type === 'poll-head';
      this.step();
      if (this.core.snapshot().stopped) return;
      if (writes !== this.store.writes) idlePolls = 0;
      else if (polls && this.pending === undefined) idlePolls++;
    }
    expect(idlePolls, 'settled').toBe(2);
  }
  types(): string[] {
    return this.log.map((c) => c.type);
  }
}

const pairs = (blocks: readonly ChainBlock[]) => blocks.map((b) => `${b.number}:${b.hash}`).sort();

function expectStoreEqualsNode(h: Harness, from = 0): void {
  expect(pairs(h.store.canonical())).toEqual(pairs(h.node.blocks.filter((b) => b.number >= from)));
  for (const r of h.store.rows.values()) {
    expect(r.canonical, `${r.block.hash} canonical`).toBe(
      h.node.blocks[r.block.number]?.hash === r.block.hash,
    );
  }
}

describe('IngestFollowCore: scenarios', () => {
  it('pins its error codes (each key equals its value)', () => {
    for (const [k, v] of Object.entries(IngestFollowErrorCode)) expect(v).toBe(k);
  });

  it('ingests the chain from `from` in height order, each block naming its parent, then polls', () => {
    const h = new Harness(new Node(3), new Store(), { ...OPTS, from: 1 });
    h.settle();
    const ingests = h.log.filter((c) => c.type === 'ingest');
    expect(ingests).toEqual([
      { type: 'ingest', height: 1, parentHash: null, orphans: [] },
      { type: 'ingest', height: 2, parentHash: '0x1-0', orphans: [] },
    ]);
    expect(h.log).toContainEqual({ type: 'caught-up', head: 2, hash: '0x2-0' });
    expectStoreEqualsNode(h, 1);
    // Caught up: the next poll is one interval after the last answer.
    const last = h.now;
    expect(h.core.nextDeadline()).toBeLessThanOrEqual(last + OPTS.pollIntervalMs);
    expect(h.core.nextDeadline()).toBeGreaterThan(last);
  });

  it.each([
    { name: 'depth 1, same length', depth: 1, length: 1 },
    { name: 'depth 3, same length', depth: 3, length: 3 },
    { name: 'depth 3, one longer', depth: 3, length: 4 },
    { name: 'depth 4 (= finality), same length', depth: 4, length: 4 },
    { name: 'depth 3, two shorter', depth: 3, length: 1 },
    { name: 'rollback of 2 (no new blocks)', depth: 2, length: 0 },
  ])(
    'a reorg of $name: walks back to the ancestor and orphans exactly the replaced blocks',
    ({ depth, length }) => {
      const h = new Harness(new Node(10), new Store());
      h.settle();
      const before = h.store.canonical();
      h.node.reorg(depth, length);
      h.log = [];
      h.settle();
      const reorg = h.log.find((c) => c.type === 'reorg');
      const replaced = before.filter((b) => b.number >= 10 - depth).sort((a, b) => a.number - b.number);
      expect(reorg).toEqual({
        type: 'reorg',
        ancestor: 9 - depth,
        depth,
        oldTip: '0x9-0',
        newTip: h.node.head.hash,
        orphans: replaced,
      });
      // The orphans ride on the first write after the walk: an ingest of the new branch, or alone.
      const firstWrite = h.log.find((c) => c.type === 'ingest' || c.type === 'orphan');
      expect(firstWrite).toMatchObject(
        length > 0
          ? { type: 'ingest', height: 10 - depth, parentHash: `0x${9 - depth}-0`, orphans: replaced }
          : { type: 'orphan', orphans: replaced },
      );
      expectStoreEqualsNode(h);
      expect([...h.store.rows.values()].filter((r) => !r.canonical).map((r) => r.block)).toEqual(replaced);
    },
  );

  it('a reorg deeper than finality stops with the height and both hashes, and writes nothing', () => {
    const h = new Harness(new Node(12), new Store());
    h.settle();
    const writes = h.store.writes;
    h.node.reorg(6, 6); // blocks 6..11 replaced; head 11, finality 4: block 7 is final
    h.log = [];
    h.settle();
    const stop = h.log.at(-1);
    expect(stop?.type).toBe('stop');
    const error = (stop as Extract<IngestFollowCommand, { type: 'stop' }>).error;
    expect(error).toBeInstanceOf(IngestReorgBeyondFinalityError);
    expect(error).toMatchObject({
      code: 'REORG_BEYOND_FINALITY',
      height: 7,
      storedHash: '0x7-0',
      nodeHash: '0x7-1',
    });
    expect(error.message).toMatch(/block 7 is stored as 0x7-0.*node now says 0x7-1/);
    expect(h.store.writes).toBe(writes);
    expect(h.types()).not.toContain('reorg');
    expect(h.core.nextDeadline()).toBeUndefined();
    expect(h.core.handle({ type: 'tick', now: h.now + 10_000 })).toEqual([]);
  });

  it('a node that reorganises between the poll and the write: the write answers moved, the walk follows', () => {
    const h = new Harness(new Node(5), new Store());
    h.settle();
    h.node.grow(1);
    h.step(); // tick → poll-head
    h.step(); // head 5 → ingest 5 (parent 0x4-0)
    expect(h.pending).toMatchObject({ type: 'ingest', height: 5, parentHash: '0x4-0' });
    h.node.reorg(3, 4); // 3..6 replaced before the write lands
    h.step();
    expect(h.pending).toEqual({ type: 'poll-head' });
    h.settle();
    expect(h.log.find((c) => c.type === 'reorg')).toMatchObject({ ancestor: 2, depth: 2 });
    expectStoreEqualsNode(h);
  });

  it('a node that moves during the walk: the walk starts over from a new poll', () => {
    const h = new Harness(new Node(8), new Store());
    h.settle();
    h.node.reorg(3, 3);
    h.step(); // poll
    h.step(); // head 7 (0x7-1): 7 and 6 (its parent hash) differ; the walk asks for block 6's parent
    expect(h.pending).toEqual({ type: 'fetch-header', number: 6 });
    h.node.reorg(2, 2); // the node moves: its block 6 is no longer the parent of the head seen
    h.step();
    expect(h.pending).toEqual({ type: 'poll-head' });
    h.settle();
    expectStoreEqualsNode(h);
  });

  it('a failed command is tried again after retryDelayMs, from a new poll', () => {
    const h = new Harness(new Node(2), new Store());
    h.step(); // poll
    h.feed({ type: 'failed', now: h.now, message: 'node unreachable' });
    h.pending = undefined;
    expect(h.core.nextDeadline()).toBe(h.now + OPTS.retryDelayMs);
    expect(h.core.handle({ type: 'tick', now: h.now + OPTS.retryDelayMs - 1 })).toEqual([]);
    expect(h.core.handle({ type: 'tick', now: h.now + OPTS.retryDelayMs })).toEqual([{ type: 'poll-head' }]);
  });

  it('a head announced while caught up polls at once, not at the next interval', () => {
    const h = new Harness(new Node(3), new Store());
    h.settle();
    const due = h.core.nextDeadline() as number;
    h.node.grow(2);
    h.now += 10;
    h.log = [];
    h.feed({ type: 'announced', now: h.now });
    expect(h.log).toEqual([{ type: 'poll-head' }]);
    while (h.pending !== undefined) h.step();
    expectStoreEqualsNode(h);
    expect(h.now).toBeLessThan(due);
    // Without an announcement the same growth waits for the poll due at the interval.
    const quiet = new Harness(new Node(3), new Store());
    quiet.settle();
    expect(quiet.core.handle({ type: 'tick', now: quiet.now + 10 })).toEqual([]);
  });

  it('a head announced while a command is outstanding makes the next poll immediate, after the writes', () => {
    const h = new Harness(new Node(3), new Store());
    h.settle();
    h.node.grow(3);
    h.feed({ type: 'announced', now: h.now });
    h.step(); // the head: ingest 3
    expect(h.pending).toMatchObject({ type: 'ingest', height: 3 });
    h.node.grow(1); // announced during the writes
    h.feed({ type: 'announced', now: h.now });
    expect(h.log.at(-1)).toMatchObject({ type: 'ingest' }); // nothing new while one is outstanding
    while (h.pending !== undefined) h.step();
    // Caught up with the head it polled (5); the announced block 6 is polled for at once.
    expect(h.core.nextDeadline()).toBe(h.now);
    h.settle();
    expectStoreEqualsNode(h);
  });

  it('an announcement inside a failure’s retry delay waits for the delay', () => {
    const h = new Harness(new Node(2), new Store());
    h.step(); // poll
    h.feed({ type: 'failed', now: h.now, message: 'node unreachable' });
    h.pending = undefined;
    expect(h.core.handle({ type: 'announced', now: h.now + 1 })).toEqual([]);
    expect(h.core.nextDeadline()).toBe(h.now + OPTS.retryDelayMs);
    expect(h.core.handle({ type: 'announced', now: h.now + OPTS.retryDelayMs })).toEqual([
      { type: 'poll-head' },
    ]);
  });

  it('resumes from the store: nothing rewritten when the node did not move, the new blocks when it grew', () => {
    const node = new Node(6);
    const store = new Store();
    new Harness(node, store).settle();
    const writes = store.writes;
    const again = new Harness(node, store);
    again.settle();
    expect(store.writes).toBe(writes);
    expect(again.log).toContainEqual({ type: 'caught-up', head: 5, hash: '0x5-0' });
    node.grow(2);
    node.reorg(1, 1);
    new Harness(node, store).settle();
    expectStoreEqualsNode({ node, store } as Harness);
  });

  it('resuming takes the longest linked run of stored blocks from the lowest', () => {
    const core = new IngestFollowCore({
      ...OPTS,
      now: 0,
      stored: [
        { number: 2, hash: 'b2', parentHash: 'b1' },
        { number: 0, hash: 'b0', parentHash: '0x' },
        { number: 1, hash: 'b1', parentHash: 'b0' },
        { number: 3, hash: 'x3', parentHash: 'other' },
      ],
    });
    expect(core.snapshot().tip).toEqual({ number: 2, hash: 'b2', parentHash: 'b1' });
  });

  it.each([
    ['a header with nothing asked', { type: 'header', now: 0, block: null }],
    ['written with nothing asked', { type: 'written', now: 0 }],
    ['moved with nothing asked', { type: 'moved', now: 0 }],
    ['failed with nothing asked', { type: 'failed', now: 0, message: 'x' }],
  ] as const)('refuses %s', (_name, input) => {
    const core = new IngestFollowCore({ ...OPTS, now: 0 });
    expect(() => core.handle(input as IngestFollowInput)).toThrow(IngestFollowInputError);
  });

  it('refuses a negative finality', () => {
    expect(() => new IngestFollowCore({ ...OPTS, finality: -1, now: 0 })).toThrow(/finality must be/);
  });
});

type Action =
  | { readonly kind: 'grow'; readonly k: number }
  | { readonly kind: 'reorg'; readonly depth: number; readonly extra: number }
  | { readonly kind: 'step'; readonly n: number }
  | { readonly kind: 'restart' }
  /** The node's subscription announces its head (at any moment, outstanding command or not). */
  | { readonly kind: 'announce' };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('grow' as const), k: fc.integer({ min: 1, max: 3 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reorg' as const),
      depth: fc.integer({ min: 1, max: 8 }),
      extra: fc.integer({ min: -3, max: 3 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('step' as const), n: fc.integer({ min: 1, max: 6 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'announce' as const }) },
);

describe('IngestFollowCore: property', () => {
  it('for any new blocks and reorgs within finality, the stored canonical chain equals the node’s once it settles', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(action, { maxLength: 60 }),
        (finality, from, actions) => {
          const node = new Node(from + 2);
          const h = new Harness(node, new Store(), { ...OPTS, finality, from });
          let maxHead = node.head.number;
          for (const a of actions) {
            if (a.kind === 'grow') node.grow(a.k);
            else if (a.kind === 'reorg') {
              // Within finality: the fork point stays above the highest head ever shown minus finality.
              const room = finality - (maxHead - node.head.number);
              const depth = Math.min(a.depth, room, node.head.number);
              if (depth < 1) continue;
              node.reorg(depth, Math.max(0, depth + a.extra));
            } else if (a.kind === 'restart') h.core = h.fresh();
            else if (a.kind === 'announce') h.feed({ type: 'announced', now: h.now });
            else for (let i = 0; i < a.n; i++) h.step();
            maxHead = Math.max(maxHead, node.head.number);
          }
          h.settle();
          expect(h.core.snapshot().stopped).toBeUndefined();
          const canonical = node.blocks.filter((b) => b.number >= from);
          expect(pairs(h.store.canonical())).toEqual(pairs(canonical));
          for (const r of h.store.rows.values()) {
            expect(r.canonical).toBe(node.blocks[r.block.number]?.hash === r.block.hash);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

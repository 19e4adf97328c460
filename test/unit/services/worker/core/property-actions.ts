// The input alphabet of the property tests: every WorkerCore input, with valid and invalid arguments,
// stale ids, and time advancing in steps comparable to leases, deadlines, grace and retention.

import fc from 'fast-check';
import {
  FailureCode,
  type ExecutionPhase,
  type WorkerCoreConfig,
} from '../../../../../src/services/worker/core/index.js';

export const MAX_TIMEOUT = 2_000;

// A task reference: an index into the id pool, or (when `live`) into the executing tasks, so results
// and watches often hit running tasks while stale ids stay in the mix.
const task = fc.integer({ min: 0, max: 4 });
const live = fc.boolean();
// Who asks: the per-client reservation rules (quota, fair-share reclaim) see a few clients.
const client = fc.constantFrom('alice', 'bob', 'carol');

export const actionArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('request' as const),
      task,
      client,
      ttl: fc.oneof(fc.integer({ min: 1, max: 400 }), fc.constant(0)),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      task,
      client,
      slot: fc.constantFrom('none', 'own', 'other', 'bogus', 'empty'),
      timeout: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 800 }),
        fc.constantFrom(-1, MAX_TIMEOUT + 1),
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), dt: fc.integer({ min: 0, max: 400 }) }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('follow' as const),
      task,
      live,
      ok: fc.boolean(),
      code: fc.constantFrom(...Object.values(FailureCode)),
      retryable: fc.option(fc.boolean(), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('activate' as const),
      task,
      live,
      ok: fc.boolean(),
      io: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('phase' as const),
      task,
      live,
      phase: fc.constantFrom<ExecutionPhase>('Builder', 'Calls', 'Plugin'),
      ok: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('timedOut' as const), task, live }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('leaseExpired' as const),
      slot: fc.integer({ min: 1, max: 30 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('watch' as const),
      task,
      live,
      op: fc.constantFrom('attach', 'detach', 'disconnected'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('ready' as const, 'lost' as const, 'drain' as const) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('query' as const), task }) },
);
export type Action = typeof actionArb extends fc.Arbitrary<infer A> ? A : never;

export const configArb: fc.Arbitrary<Partial<WorkerCoreConfig>> = fc.record({
  taskSlots: fc.integer({ min: 1, max: 3 }),
  defaultTtlMs: fc.integer({ min: 50, max: 300 }),
  taskDeadlineMs: fc.integer({ min: 100, max: 1_000 }),
  maxTaskTimeoutMs: fc.constant(MAX_TIMEOUT),
  resultRetentionMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 800 })),
  watchDisconnectGraceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
  maxReservedSlotsPerClient: fc.integer({ min: 0, max: 2 }),
});

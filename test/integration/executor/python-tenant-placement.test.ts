// Tenants on the Python executor's execution processes (src/executor/python/blockx_executor/tenants.py,
// docs/executor.md § Tenants on threads): the placement the router runs each turn, driven through
// test/support/python-tenant-sim.py (the router's books without processes or clock) as a table and a
// fast-check property. Integration tier only because it runs the Python interpreter.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PYTHON_COMMAND } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000 });

const SIM = fileURLToPath(new URL('../../support/python-tenant-sim.py', import.meta.url));

type Op = readonly [string, string | number];
interface Scenario {
  readonly units: number;
  readonly maxCalls: number;
  readonly sticky: boolean;
  readonly ops: readonly Op[];
  readonly steady?: string;
}
/** [op index, call id, unit id, tenant], or [op index, 'renew', unit id, the tenant it is renewed for]. */
type TraceRow = readonly [number, number | 'renew', number, string];
interface Answer {
  readonly trace: TraceRow[];
  readonly violation: string | null;
  readonly queued: number;
  readonly turns: number;
  readonly error?: string;
}

let sim: ChildProcessWithoutNullStreams;
const pending: ((line: string) => void)[] = [];

beforeAll(() => {
  sim = spawn(PYTHON_COMMAND[0]!, ['-B', SIM], { stdio: 'pipe' });
  createInterface({ input: sim.stdout }).on('line', (line) => pending.shift()?.(line));
});

afterAll(() => {
  sim?.kill('SIGKILL');
});

function run(s: Scenario): Promise<Answer> {
  return new Promise((resolve) => {
    pending.push((line) => resolve(JSON.parse(line) as Answer));
    sim.stdin.write(`${JSON.stringify(s)}\n`);
  });
}

const arrive = (t: string): Op => ['arrive', t];
const complete: Op = ['complete', 0];
const ready: Op = ['ready', 0];

describe('python executor: tenants on execution processes', () => {
  // Each row: the ops, and the placements and renewals they lead to ([op index, call, process, tenant]).
  const rows: { name: string; s: Scenario; trace: TraceRow[] }[] = [
    {
      // b arrives at op 2 and a's third call at op 3 is held back: process 0 drains for b and is renewed;
      // then a waits in turn, and process 1 served b, so a gets a fresh process too.
      name: 'a waiting tenant reserves the process, which drains, is renewed (isolation task) and takes it',
      s: {
        units: 1,
        maxCalls: 2,
        sticky: true,
        ops: [...['a', 'a', 'b', 'a'].map(arrive), complete, complete, ready, complete, ready],
      },
      trace: [
        [0, 0, 0, 'a'],
        [1, 1, 0, 'a'],
        [5, 'renew', 0, 'b'],
        [6, 2, 1, 'b'],
        [7, 'renew', 1, 'a'],
        [8, 3, 2, 'a'],
      ],
    },
    {
      name: 'with isolation none a drained process switches tenants without a new fork',
      s: {
        units: 1,
        maxCalls: 2,
        sticky: false,
        ops: [...['a', 'a', 'b', 'a'].map(arrive), complete, complete, complete],
      },
      trace: [
        [0, 0, 0, 'a'],
        [1, 1, 0, 'a'],
        [5, 2, 0, 'b'],
        [6, 3, 0, 'a'],
      ],
    },
    {
      // Both '' calls share the process; x waits while they wait on the Worker (running 0, calls 2).
      name: 'calls without a tenant are one tenant; a waiting call keeps its process’s tenant',
      s: {
        units: 1,
        maxCalls: 4,
        sticky: false,
        ops: [arrive(''), arrive(''), ['wait', 0], ['wait', 0], arrive('x'), complete, complete],
      },
      trace: [
        [0, 0, 0, ''],
        [1, 1, 0, ''],
        [6, 2, 0, 'x'],
      ],
    },
    {
      name: 'a reservation whose tenant has nothing queued any more is dropped',
      s: {
        units: 1,
        maxCalls: 2,
        sticky: false,
        ops: [arrive('a'), arrive('b'), ['cancel', 'b'], arrive('a')],
      },
      trace: [
        [0, 0, 0, 'a'],
        [3, 2, 0, 'a'],
      ],
    },
    {
      // The router reads many frames in a turn: process 0 empties, a's queued call goes there and b, read
      // after it, reserves it. It must not be renewed with a's call just placed on it (the first version
      // did, and a's call was lost: found by bench/calls --only tenants-python, which stalled).
      name: 'a process given a call in the same turn as a reservation is not renewed',
      s: {
        units: 2,
        maxCalls: 2,
        sticky: true,
        ops: [...['a', 'a', 'a', 'a', 'a', 'b'].map(arrive), ['drain', 0]],
      },
      trace: [
        [0, 0, 0, 'a'],
        [1, 1, 1, 'a'],
        [2, 2, 0, 'a'],
        [3, 3, 1, 'a'],
        [6, 4, 0, 'a'],
      ],
    },
    {
      name: 'a process that never served anyone takes a new tenant without a renewal',
      s: { units: 2, maxCalls: 1, sticky: true, ops: [arrive('a'), complete, arrive('b')] },
      trace: [
        [0, 0, 0, 'a'],
        [2, 1, 1, 'b'],
      ],
    },
  ];

  it.each(rows)('$name', async ({ s, trace }) => {
    const a = await run(s);
    expect(a.violation).toBeNull();
    expect(a.trace).toEqual(trace);
  });

  it('property: never two tenants on a process (with isolation task, in its life); every call placed under pressure', async () => {
    // Arrivals weigh most, so queues build up behind busy processes; `drain` ends a process's calls in
    // one turn, as the router reads many frames in one.
    const tenant = fc.constantFrom('a', 'b', 'a', 'b', '', 'c');
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fc.constant('arrive'), tenant) },
      { weight: 2, arbitrary: fc.tuple(fc.constantFrom('complete', 'wait', 'resume', 'drain'), fc.nat(50)) },
      { weight: 1, arbitrary: fc.tuple(fc.constant('cancel'), tenant) },
      { weight: 1, arbitrary: fc.tuple(fc.constant('ready'), fc.constant(0)) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.array(op, { maxLength: 60 }),
        fc.constantFrom('', 'a', 'b', 'c'),
        async (units, maxCalls, sticky, ops, steady) => {
          const a = await run({ units, maxCalls, sticky, ops, steady });
          expect(a.error).toBeUndefined();
          expect(a.violation).toBeNull();
          // Under a steady stream of one tenant with one call ending per turn, every call queued after
          // the ops is placed within a bound: the calls already on a process, plus a renewal, per tenant.
          const queuedAfterOps = ops.filter((o) => o[0] === 'arrive').length;
          expect(a.turns).toBeLessThanOrEqual(4 * (queuedAfterOps + units * maxCalls) + 8);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

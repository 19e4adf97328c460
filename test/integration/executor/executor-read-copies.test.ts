// Read copies on a real executor process (src/executor/read-copies.ts): with an `ioCache` id, the calls
// of one Calls phase on one execution thread ask the Worker for a key once, report the reads they
// answered from the copy as `ioHits`, and never share a failure or a cancellation. One thread, so the
// counts are exact.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FunctionCodeView } from '../../../src/executor/code-epochs.js';
import type {
  ResumeOutcome,
  WaitingRequest,
} from '../../../src/services/call-host/adapters/executor-link.js';
import { ExecutorHarness, FIXTURE_FUNCTIONS, type Terminal } from './executor-harness.js';

// Real executor processes started from src/ under tsx: the bounds these tests had in the process tier.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const fixtures = new FunctionCodeView({ dir: FIXTURE_FUNCTIONS });
let h: ExecutorHarness;
let epoch: string;
/** Every IO request the "Worker" got. */
let requests: WaitingRequest[] = [];
/** How the next requests are answered; default: a row per key, `null` for `nobody`. */
let answer: (req: WaitingRequest) => Promise<ResumeOutcome>;

const rowOf = (key: unknown) => {
  const id = (key as { id: string }).id;
  return id === 'nobody' ? null : { id, balance: id.length };
};
const byKey = (req: WaitingRequest): Promise<ResumeOutcome> => {
  const r = req.request;
  if (r.kind !== 'io') throw new Error('only io here');
  if (r.op === 'get') return Promise.resolve({ ok: true, value: rowOf(r.key) });
  if (r.op === 'getMany') return Promise.resolve({ ok: true, value: r.keys.map(rowOf) });
  return Promise.resolve({ ok: true, value: [{ id: 'scanned' }] });
};

function deferred(): { promise: Promise<ResumeOutcome>; resolve: (o: ResumeOutcome) => void } {
  let resolve!: (o: ResumeOutcome) => void;
  const promise = new Promise<ResumeOutcome>((r) => (resolve = r));
  return { promise, resolve };
}

const run = (mode: string, key: string, ioCache: string | undefined, callId?: string): Promise<Terminal> =>
  h.run({
    function: 'copy_reader',
    args: [mode, key],
    codeEpoch: epoch,
    ...(ioCache === undefined ? {} : { ioCache }),
    ...(callId === undefined ? {} : { callId }),
  });
const hitsOf = (results: readonly Terminal[]) => results.reduce((n, r) => n + (r.ioHits ?? 0), 0);
const settle = () => new Promise((r) => setTimeout(r, 50));

beforeAll(async () => {
  epoch = await fixtures.pinCurrent();
  h = await new ExecutorHarness({
    functionsDir: FIXTURE_FUNCTIONS,
    epochs: { snapshot: (e) => fixtures.snapshot(e), onRetire: () => () => {} },
    threads: 1,
    onWaiting: (req) => {
      requests.push(req);
      return answer(req);
    },
  }).start();
  await run('get', 'warm-up', undefined); // the module is loaded before any timing matters
});

afterAll(async () => {
  await h?.stop();
});

beforeEach(() => {
  requests = [];
  answer = byKey;
});

describe('executor read copies', () => {
  it('asks the Worker once for a key read by 20 concurrent calls of one Calls phase', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => run('get', 'alice', 'phase-a')));
    expect(requests).toHaveLength(1);
    for (const r of results)
      expect(r).toMatchObject({
        type: 'callCompleted',
        value: { row: { id: 'alice', balance: 5 }, frozen: true },
      });
    expect(hitsOf(results)).toBe(19);
    // Later calls of the phase hit too, without any frame to the Worker.
    const later = await run('get', 'alice', 'phase-a');
    expect(later.ioHits).toBe(1);
    expect(requests).toHaveLength(1);
  });

  it('without an ioCache id every read goes to the Worker and nothing is counted', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => run('get', 'bob', undefined)));
    expect(requests).toHaveLength(5);
    expect(hitsOf(results)).toBe(0);
    expect(results.every((r) => r.type === 'callCompleted' && r.ioHits === undefined)).toBe(true);
    // Rows come frozen either way: a function sees the same thing with copies on or off.
    expect(results.every((r) => r.type === 'callCompleted' && (r.value as { frozen: boolean }).frozen)).toBe(
      true,
    );
  });

  it('keeps Calls phases apart, and forgets one on DropIoCache', async () => {
    await run('get', 'carol', 'phase-b');
    await run('get', 'carol', 'phase-c');
    expect(requests).toHaveLength(2);
    expect((await run('get', 'carol', 'phase-b')).ioHits).toBe(1);
    h.link.dropIoCache('phase-b');
    await settle();
    expect((await run('get', 'carol', 'phase-b')).ioHits).toBeUndefined();
    expect(requests).toHaveLength(3);
    expect((await run('get', 'carol', 'phase-c')).ioHits).toBe(1);
  });

  it('copies getMany answers (one hit per key) and missing rows, but never scans', async () => {
    const many = await Promise.all([1, 2, 3].map(() => run('getMany', 'dave', 'phase-d')));
    expect(many.map((r) => r.type === 'callCompleted' && r.value)).toEqual(
      Array(3).fill({ rows: [{ id: 'dave', balance: 4 }, null], frozen: true }),
    );
    expect(hitsOf(many)).toBe(4); // two copied answers × two keys
    const scans = await Promise.all([1, 2, 3].map(() => run('scan', 'dave', 'phase-d')));
    expect(hitsOf(scans)).toBe(0);
    expect(requests.map((r) => r.request.kind === 'io' && r.request.op)).toEqual([
      'getMany',
      'scan',
      'scan',
      'scan',
    ]);
  });

  it('does not copy a failed read: the next call asks again', async () => {
    let failures = 1;
    answer = (req) =>
      failures-- > 0
        ? Promise.reject(Object.assign(new Error('connection reset'), { retryable: true }))
        : byKey(req);
    const first = await run('get', 'erin', 'phase-e');
    expect(first).toMatchObject({ type: 'callFailed', kind: 'io', retryable: true });
    const second = await run('get', 'erin', 'phase-e');
    expect(second).toMatchObject({ type: 'callCompleted', value: { row: { id: 'erin' } } });
    expect(second.ioHits).toBeUndefined();
    expect(requests).toHaveLength(2);
  });

  it('a call waiting on another call’s read asks itself when that read fails', async () => {
    const leaderRead = deferred();
    answer = (req) => (requests.length === 1 ? leaderRead.promise : byKey(req));
    const leader = run('get', 'frank', 'phase-f');
    await h.until(() => requests.length === 1);
    const follower = run('get', 'frank', 'phase-f');
    await settle(); // the follower has started and waits on the leader's read
    expect(requests).toHaveLength(1);
    leaderRead.resolve({ ok: false, error: { message: 'cancelled elsewhere', kind: 'io', retryable: true } });
    expect(await leader).toMatchObject({ type: 'callFailed', kind: 'io' });
    expect(await follower).toMatchObject({ type: 'callCompleted', value: { row: { id: 'frank' } } });
    expect(requests).toHaveLength(2);
  });

  it('cancelling a call that waits on another call’s read ends it at once; the other goes on', async () => {
    const leaderRead = deferred();
    answer = () => leaderRead.promise;
    const leader = run('get', 'gina', 'phase-g', 'leader-g');
    await h.until(() => requests.length === 1);
    const follower = run('get', 'gina', 'phase-g', 'follower-g');
    await settle();
    h.link.cancelCall('follower-g', 1, 'test');
    expect(await follower).toMatchObject({ type: 'callFailed', kind: 'deadline', retryable: true });
    leaderRead.resolve({ ok: true, value: { id: 'gina', balance: 4 } });
    expect(await leader).toMatchObject({
      type: 'callCompleted',
      value: { row: { id: 'gina' }, frozen: true },
    });
    expect(requests).toHaveLength(1);
  });

  it('a read whose call ended without awaiting it is abandoned: the next call asks the Worker itself', async () => {
    const neverDelivered = deferred();
    answer = (req) => (requests.length === 1 ? neverDelivered.promise : byKey(req));
    const forgetful = await run('forget', 'ivy', 'phase-i');
    expect(forgetful).toMatchObject({ type: 'callCompleted', value: 'forgot' });
    expect(requests).toHaveLength(1);
    // Without the abandon, this call would wait for the first read's answer, which the executor drops
    // (its call is over), and hang until its deadline.
    const next = await run('get', 'ivy', 'phase-i');
    expect(next).toMatchObject({ type: 'callCompleted', value: { row: { id: 'ivy' } } });
    expect(requests).toHaveLength(2);
    neverDelivered.resolve({ ok: true, value: { id: 'ivy', balance: 3 } });
  });

  it('reports copy hits of a call that failed afterwards', async () => {
    await run('get', 'hank', 'phase-h');
    const failed = await run('throw', 'hank', 'phase-h');
    expect(failed).toMatchObject({ type: 'callFailed', kind: 'user', ioHits: 1 });
    expect(requests).toHaveLength(1);
  });
});

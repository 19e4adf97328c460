// LinkCore (src/services/call-host/core/link/): the handshake, the in-flight table, the queue and "link
// lost → fail all in flight", as scenarios on virtual time, plus a property: every call accepted gets
// exactly one terminal event, whatever the executor and the network do.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallAlreadyInFlightError } from '../../../../../../src/executor/errors.js';
import { PROTOCOL_VERSION, type ExecutorToWorker } from '../../../../../../src/executor/protocol.js';
import {
  LinkCore,
  constantTimeEqual,
  type ConnId,
  type ExecuteCallCommand,
  type LinkCommand,
} from '../../../../../../src/services/call-host/core/link/index.js';

const SECRET = 'ab'.repeat(32);

function call(callId: string, attempt = 1, codeEpoch = 'e1'): ExecuteCallCommand {
  return { taskId: 't1', callId, attempt, function: 'f', args: [], codeEpoch, budgetMs: 1000 };
}
function hello(secret: string | null = SECRET, protocolVersion = PROTOCOL_VERSION): ExecutorToWorker {
  return {
    type: 'Hello',
    protocolVersion,
    executorVersion: '0.0.0-test',
    pid: 42,
    threads: 2,
    functionsDir: '/f',
    ...(secret === null ? {} : { secret }),
  };
}
const heartbeat: ExecutorToWorker = {
  type: 'Heartbeat',
  seq: 0,
  pid: 42,
  inflight: 0,
  queued: 0,
  threads: 2,
  epochs: 0,
  rssBytes: 1,
};
const done = (callId: string, attempt = 1): ExecutorToWorker => ({
  type: 'CallCompleted',
  callId,
  attempt,
  value: 1,
  durationMs: 1,
});

/** LinkCore with the slow, obvious reading of its hello deadlines, to check the kept count against. */
class ProbedLinkCore extends LinkCore {
  slowNextDeadline(): number | undefined {
    let next: number | undefined;
    for (const c of this.conns.values())
      if (c.helloDeadline !== undefined && (next === undefined || c.helloDeadline < next))
        next = c.helloDeadline;
    return next;
  }
}

/** A core with a shell that carries out continuations (flushQueued) the way executor-link.ts does. */
function harness(opts: { queueWhileDown?: boolean; helloTimeoutMs?: number; bulkResults?: boolean } = {}) {
  const core = new ProbedLinkCore({
    helloTimeoutMs: opts.helloTimeoutMs ?? 5000,
    queueWhileDown: opts.queueWhileDown ?? true,
    bulkResults: opts.bulkResults ?? false,
  });
  const log: LinkCommand[] = [];
  const drain = (): LinkCommand[] => {
    const out: LinkCommand[] = [];
    for (const c of core.takeCommands()) {
      out.push(c);
      if (c.type === 'flushQueued') {
        core.flushQueued(c.conn);
        out.push(...drain());
      }
    }
    log.push(...out);
    return out;
  };
  /** Open a connection and authenticate it as the executor; ready after its first heartbeat. */
  const executor = (now = 0, ready = true): ConnId => {
    core.expectSecret(SECRET);
    const id = core.connectionOpened(now);
    core.messageReceived(id, now, hello(), 0);
    if (ready) core.messageReceived(id, now, heartbeat, 0);
    drain();
    return id;
  };
  return { core, drain, executor, log };
}
const types = (cs: readonly LinkCommand[]): string[] =>
  cs.map((c) => (c.type === 'emit' || c.type === 'emitLater' ? `${c.type}:${c.event.type}` : c.type));

describe('LinkCore handshake', () => {
  const firstFrames: [string, ExecutorToWorker, string][] = [
    ['a Heartbeat', heartbeat, 'its first frame is "Heartbeat", not Hello'],
    ['a Hello without a secret', hello(null), 'its Hello carries no secret'],
    [
      'a Hello with a wrong secret',
      hello('cd'.repeat(32)),
      'its Hello carries a wrong or already used secret',
    ],
  ];
  it.each(firstFrames)(
    'refuses a connection whose first frame is %s, leaving the executor alone',
    (_, m, why) => {
      const { core, drain, executor } = harness();
      executor();
      core.executeCall(call('c1'));
      drain();
      const intruder = core.connectionOpened(10);
      core.messageReceived(intruder, 10, m, 0);
      expect(drain()).toEqual([{ type: 'closeConnection', conn: intruder, refusal: why }]);
      expect(core.ready).toBe(true);
      expect(core.inflight).toBe(1);
    },
  );

  it('a secret opens one connection: a second Hello with it is refused', () => {
    const { core, drain, executor } = harness();
    executor();
    const again = core.connectionOpened(1);
    core.messageReceived(again, 1, hello(), 0);
    expect(drain()).toEqual([
      { type: 'closeConnection', conn: again, refusal: 'its Hello carries a wrong or already used secret' },
    ]);
  });

  it('refuses a silent connection at its hello deadline, not before (virtual time)', () => {
    const { core, drain } = harness({ helloTimeoutMs: 5000 });
    const id = core.connectionOpened(1000);
    expect(core.nextDeadline()).toBe(6000);
    core.tick(5999);
    expect(drain()).toEqual([]);
    core.tick(6000);
    expect(drain()).toEqual([{ type: 'closeConnection', conn: id, refusal: 'no Hello within 5000 ms' }]);
    expect(core.nextDeadline()).toBeUndefined();
  });

  it('an authenticated newcomer supersedes the executor: its sent calls fail, queued ones wait', () => {
    const { core, drain, executor } = harness();
    const first = executor();
    core.executeCall(call('c1'));
    drain();
    core.expectSecret(SECRET);
    const second = core.connectionOpened(5);
    core.messageReceived(second, 5, hello(), 0);
    const out = drain();
    expect(types(out)).toEqual(['closeConnection', 'emit:executorLost', 'emit:callFailed']);
    expect(out[0]).toEqual({ type: 'closeConnection', conn: first });
    expect(core.ready).toBe(false);
    core.executeCall(call('c2'));
    expect(drain()).toEqual([]); // held until the newcomer's first heartbeat
    core.messageReceived(second, 6, heartbeat, 0);
    expect(types(drain())).toEqual([
      'emit:executorReady',
      'flushQueued',
      'defineEpoch',
      'sendExecutes',
      'emit:heartbeat',
    ]);
  });

  it('another protocol version gets Shutdown and is lost', () => {
    const { core, drain } = harness();
    core.expectSecret(SECRET);
    const id = core.connectionOpened(0);
    core.messageReceived(id, 0, hello(SECRET, PROTOCOL_VERSION + 1), 0);
    expect(types(drain())).toEqual(['log', 'send', 'closeConnection']); // never introduced itself: nothing lost
  });

  it('compares secrets by length and content', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'ab')).toBe(false);
  });
});

describe('LinkCore calls', () => {
  const cases: {
    name: string;
    opts?: { queueWhileDown?: boolean };
    ready: boolean;
    steps: (core: LinkCore) => void;
    expected: string[];
  }[] = [
    {
      name: 'sends at once when ready, defining its epoch first',
      ready: true,
      steps: (c) => c.executeCall(call('c1')),
      expected: ['defineEpoch', 'sendExecutes'],
    },
    {
      name: 'defines an epoch once per connection',
      ready: true,
      steps: (c) => (c.executeCall(call('c1')), c.executeCall(call('c2'))),
      expected: ['defineEpoch', 'sendExecutes'],
    },
    {
      name: 'queues while down',
      ready: false,
      steps: (c) => c.executeCall(call('c1')),
      expected: [],
    },
    {
      name: 'fails at once, later, while down without queueWhileDown',
      opts: { queueWhileDown: false },
      ready: false,
      steps: (c) => c.executeCall(call('c1')),
      expected: ['emitLater:callFailed'],
    },
    {
      name: 'a queued call cancelled fails later with deadline',
      ready: false,
      steps: (c) => (c.executeCall(call('c1')), c.cancelCall('c1', 1, 'r')),
      expected: ['emitLater:callFailed'],
    },
    {
      name: 'a sent call cancelled gets CancelCall',
      ready: true,
      steps: (c) => (c.executeCall(call('c1')), c.cancelCall('c1', 1, 'r')),
      expected: ['defineEpoch', 'sendExecutes', 'send'],
    },
    {
      name: 'an unsendable call fails later as user, not retryable',
      ready: true,
      steps: (c) => (c.executeCall(call('c1')), c.executeUnsendable('c1', 1, 'too large')),
      expected: ['defineEpoch', 'sendExecutes', 'emitLater:callFailed'],
    },
    {
      name: 'the link closing fails what is queued',
      ready: false,
      steps: (c) => (c.executeCall(call('c1')), c.close()),
      expected: ['closeConnection', 'emit:executorLost', 'emit:callFailed'],
    },
  ];
  it.each(cases)('$name', ({ opts, ready, steps, expected }) => {
    const { core, drain, executor } = harness(opts);
    executor(0, ready);
    steps(core);
    expect(types(drain())).toEqual(expected);
  });

  it('refuses a second executeCall of an attempt in flight', () => {
    const { core, executor } = harness();
    executor();
    core.executeCall(call('c1'));
    expect(() => core.executeCall(call('c1'))).toThrow(CallAlreadyInFlightError);
  });

  it('answers waits by request id or oldest first, and ignores unknown ones', () => {
    const { core, drain, executor } = harness();
    const id = executor();
    core.executeCall(call('c1'));
    for (const requestId of [1, 2, 3])
      core.messageReceived(
        id,
        0,
        {
          type: 'CallWaiting',
          taskId: 't1',
          callId: 'c1',
          attempt: 1,
          requestId,
          request: { kind: 'io', op: 'get', table: 'x', key: {} },
        },
        0,
      );
    drain();
    core.resumeCall('c1', 1, { requestId: 2, ok: true, value: 1 });
    core.resumeCall('c1', 1, { ok: true });
    core.resumeCall('c1', 1, { requestId: 9, ok: true });
    const resumed = drain().flatMap((c) => (c.type === 'sendResume' ? [c.requestId] : []));
    expect(resumed).toEqual([2, 1]);
  });

  it('drops terminal frames of a lost connection (an attempt is answered once)', () => {
    const { core, drain, executor } = harness();
    const id = executor();
    core.executeCall(call('c1'));
    core.dropConnection('heartbeat timeout');
    drain();
    core.messageReceived(id, 1, done('c1'), 10);
    expect(drain()).toEqual([]);
  });

  it('sends the attempts of executeCalls as one command, refusing one in flight on a microtask', () => {
    const { core, drain, executor } = harness();
    const id = executor();
    core.executeCall(call('c1'));
    drain();
    core.executeCalls([call('c0'), call('c1'), call('c2')]);
    const out = drain();
    expect(types(out)).toEqual(['sendExecutes', 'emitLater:callFailed', 'sendExecutes']);
    expect(out[0]).toEqual({ type: 'sendExecutes', conn: id, calls: [call('c0')] });
    expect(out[2]).toEqual({ type: 'sendExecutes', conn: id, calls: [call('c2')] });
    expect(out[1]).toMatchObject({
      event: { type: 'callFailed', callId: 'c1', attempt: 1, kind: 'executor_crash', retryable: true },
    });
    expect(core.inflight).toBe(3); // c0, c1 (the first one) and c2
  });

  it('a CallsCompleted frame is one callsCompleted event of the attempts in flight on that connection', () => {
    const { core, drain, executor } = harness();
    const id = executor();
    core.executeCalls([call('c1'), call('c2'), call('c3')]);
    drain();
    const entry = (callId: string, attempt = 1) => ({ callId, attempt, value: callId, durationMs: 1 });
    // c2 twice, c9 never sent, c3 of another attempt: only the first c2 and c1 answer anything.
    const frame: ExecutorToWorker = {
      type: 'CallsCompleted',
      taskId: 't1',
      results: [entry('c2'), entry('c9'), entry('c1'), entry('c2'), entry('c3', 2)],
    };
    core.messageReceived(id, 1, frame, 500);
    expect(drain()).toEqual([
      {
        type: 'emit',
        event: {
          type: 'callsCompleted',
          taskId: 't1',
          results: [entry('c2'), entry('c1')],
          outputBytesEach: 100,
        },
      },
    ]);
    expect(core.inflight).toBe(1);
    // Answered already: the same frame again is dropped whole, and c3 still ends once, when it ends.
    core.messageReceived(id, 2, frame, 500);
    expect(drain()).toEqual([]);
    core.messageReceived(id, 3, { type: 'CallsCompleted', taskId: 't1', results: [entry('c3')] }, 80);
    expect(drain()).toMatchObject([{ event: { type: 'callsCompleted', results: [entry('c3')] } }]);
    expect(core.inflight).toBe(0);
  });

  it('passes a CallsCompleted whose every entry is in flight through as it came (no copy)', () => {
    const { core, drain, executor } = harness();
    const id = executor();
    core.executeCalls([call('c1'), call('c2')]);
    drain();
    const results = [
      { callId: 'c1', attempt: 1, durationMs: 1 },
      { callId: 'c2', attempt: 1, value: 2, durationMs: 1, ioHits: 3 },
    ];
    core.messageReceived(id, 1, { type: 'CallsCompleted', taskId: 't1', results }, 90);
    const [emitted] = drain();
    expect(emitted?.type === 'emit' && emitted.event.type === 'callsCompleted' && emitted.event.results).toBe(
      results,
    );
  });

  it('bulkResults: successes of one task back to back join one callsCompleted event, until anything else comes between', () => {
    const { core, drain, executor } = harness({ bulkResults: true });
    const id = executor();
    const other = (callId: string): ExecuteCallCommand => ({ ...call(callId), taskId: 't2' });
    core.executeCalls([call('c1'), call('c2'), call('c3'), call('c4'), other('d1'), call('c5'), call('c6')]);
    drain();
    const bulk = (...callIds: string[]): ExecutorToWorker => ({
      type: 'CallsCompleted',
      taskId: 't1',
      results: callIds.map((callId) => ({ callId, attempt: 1, durationMs: 1 })),
    });
    core.messageReceived(id, 1, done('c1'), 100);
    core.messageReceived(id, 1, bulk('c2', 'c9'), 60); // c9 is not in flight: half the frame counts
    core.messageReceived(id, 1, done('c3'), 50);
    core.messageReceived(id, 1, done('d1'), 70); // another task
    core.messageReceived(id, 1, done('c4'), 40);
    core.messageReceived(
      id,
      1,
      { type: 'CallFailed', callId: 'c5', attempt: 1, kind: 'user', retryable: false, message: 'x' },
      0,
    );
    core.messageReceived(id, 1, done('c6'), 10);
    const out = drain();
    const events = out.map((c) =>
      c.type === 'emit' && c.event.type === 'callsCompleted'
        ? [c.event.taskId, c.event.results.map((r) => r.callId), c.event.outputBytesEach]
        : c.type === 'emit'
          ? c.event.type
          : c.type,
    );
    expect(events).toEqual([
      ['t1', ['c1', 'c2', 'c3'], Math.ceil(180 / 3)],
      ['t2', ['d1'], 70],
      ['t1', ['c4'], 40],
      'callFailed',
      ['t1', ['c6'], 10],
    ]);
    // A success after the shell took the commands opens a new event.
    core.executeCall(call('c7'));
    core.executeCall(call('c8'));
    drain();
    core.messageReceived(id, 2, done('c7'), 10);
    drain();
    core.messageReceived(id, 2, done('c8'), 10);
    expect(drain()).toMatchObject([{ event: { type: 'callsCompleted', results: [{ callId: 'c8' }] } }]);
    expect(core.inflight).toBe(0);
  });

  it("a frame's results array is never grown in place when later successes join it", () => {
    const { core, drain, executor } = harness({ bulkResults: true });
    const id = executor();
    core.executeCalls([call('c1'), call('c2')]);
    drain();
    const results = [{ callId: 'c1', attempt: 1, durationMs: 1 }];
    core.messageReceived(id, 1, { type: 'CallsCompleted', taskId: 't1', results }, 30);
    core.messageReceived(id, 1, done('c2'), 30);
    expect(drain()).toMatchObject([{ event: { results: [{ callId: 'c1' }, { callId: 'c2' }] } }]);
    expect(results).toHaveLength(1);
  });

  it('loses an executor that sends a CallsCompleted without results', () => {
    const { core, drain, executor } = harness();
    const id = executor();
    core.executeCall(call('c1'));
    drain();
    const bad = { type: 'CallsCompleted', taskId: 't1' } as unknown as ExecutorToWorker;
    core.messageReceived(id, 1, bad, 40);
    expect(types(drain())).toEqual(['closeConnection', 'emit:executorLost', 'emit:callFailed']);
  });

  it('records the last heartbeat time it was given', () => {
    const { core, executor } = harness();
    const id = executor(100);
    core.messageReceived(id, 250, heartbeat, 0);
    expect(core.lastHeartbeatAtMs).toBe(250);
  });
});

describe('LinkCore property', () => {
  type Op =
    | { op: 'execute' }
    | { op: 'complete'; pick: number }
    | { op: 'completeMany'; picks: number[] }
    | { op: 'executeMany'; n: number; again: number }
    | { op: 'fail'; pick: number }
    | { op: 'cancel'; pick: number }
    | { op: 'spawn' }
    | { op: 'heartbeat' }
    | { op: 'intruder' }
    | { op: 'drop' }
    | { op: 'socketClosed' }
    | { op: 'tick'; ms: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 4, arbitrary: fc.constant({ op: 'execute' as const }) },
    { weight: 3, arbitrary: fc.nat(20).map((pick) => ({ op: 'complete' as const, pick })) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.nat(20), { minLength: 1, maxLength: 5 })
        .map((picks) => ({ op: 'completeMany' as const, picks })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ n: fc.integer({ min: 1, max: 4 }), again: fc.nat(6) })
        .map(({ n, again }) => ({ op: 'executeMany' as const, n, again })),
    },
    { weight: 1, arbitrary: fc.nat(20).map((pick) => ({ op: 'fail' as const, pick })) },
    { weight: 1, arbitrary: fc.nat(20).map((pick) => ({ op: 'cancel' as const, pick })) },
    { weight: 1, arbitrary: fc.constant({ op: 'spawn' as const }) },
    { weight: 2, arbitrary: fc.constant({ op: 'heartbeat' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'intruder' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'drop' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'socketClosed' as const }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 6000 }).map((ms) => ({ op: 'tick' as const, ms })) },
  );

  it('every call accepted gets exactly one terminal event, by a result or the link-lost failure (also in bulk)', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 120 }),
        fc.boolean(),
        fc.boolean(),
        (ops, queueWhileDown, bulkResults) => {
          const { core, drain, log } = harness({ queueWhileDown, bulkResults, helloTimeoutMs: 5000 });
          let now = 0;
          let seq = 0;
          let conn: ConnId | undefined;
          /** What the fake executor was sent and has not answered, per connection. */
          const sentOn = new Map<ConnId, string[]>();
          const terminal = new Map<string, number>();
          /** executeMany repeating an attempt in flight: refused, one callFailed each, not accepted. */
          let refusals = 0;
          const collect = (): void => {
            for (const c of drain()) {
              if (c.type === 'sendExecutes')
                sentOn.set(c.conn, [...(sentOn.get(c.conn) ?? []), ...c.calls.map((x) => x.callId)]);
              if (c.type !== 'emit' && c.type !== 'emitLater') continue;
              const ev = c.event;
              if (ev.type === 'callFailed' && ev.message.includes('refused')) refusals -= 1;
              else if (ev.type === 'callCompleted' || ev.type === 'callFailed')
                terminal.set(ev.callId, (terminal.get(ev.callId) ?? 0) + 1);
              else if (ev.type === 'callsCompleted') {
                expect(ev.results.length).toBeGreaterThan(0);
                for (const r of ev.results) terminal.set(r.callId, (terminal.get(r.callId) ?? 0) + 1);
              }
            }
          };
          /** Accepted (c0..c{seq-1} all were) and no terminal event yet. */
          const isInFlight = (i: number): boolean => (terminal.get(`c${i}`) ?? 0) === 0;
          const answer = (pick: number, m: (callId: string) => ExecutorToWorker): void => {
            // Any connection that ever got calls may answer, even a lost one (late frames).
            const conns = [...sentOn.keys()];
            if (conns.length === 0) return;
            const id = conns[pick % conns.length]!;
            const pending = sentOn.get(id)!;
            if (pending.length === 0) return;
            const [callId] = pending.splice(pick % pending.length, 1);
            core.messageReceived(id, now, m(callId!), 8);
          };
          for (const o of ops) {
            switch (o.op) {
              case 'execute':
                core.executeCall(call(`c${seq++}`));
                break;
              case 'complete':
                answer(o.pick, (id) => done(id));
                break;
              case 'completeMany': {
                // One frame from one connection naming some of its calls, duplicates and answered ones
                // included (a late or repeated entry must answer nothing).
                const conns = [...sentOn.keys()];
                if (conns.length === 0) break;
                const id = conns[o.picks[0]! % conns.length]!;
                const pending = sentOn.get(id)!;
                const named = o.picks.map((p) =>
                  pending.length > 0 ? pending[p % pending.length]! : `c${p}`,
                );
                sentOn.set(
                  id,
                  pending.filter((x) => !named.includes(x)),
                );
                const results = named.map((callId) => ({ callId, attempt: 1, value: 1, durationMs: 1 }));
                core.messageReceived(id, now, { type: 'CallsCompleted', taskId: 't1', results }, 50);
                break;
              }
              case 'executeMany': {
                const batch = Array.from({ length: o.n }, () => call(`c${seq++}`));
                // Sometimes repeat an attempt already accepted: refused, the original stays in flight.
                if (o.again < seq - o.n) {
                  batch.splice(1, 0, call(`c${o.again}`));
                  if (isInFlight(o.again)) refusals += 1;
                  else batch.splice(1, 1);
                }
                core.executeCalls(batch);
                break;
              }
              case 'fail':
                answer(o.pick, (callId) => ({
                  type: 'CallFailed',
                  callId,
                  attempt: 1,
                  kind: 'user',
                  retryable: false,
                  message: 'x',
                }));
                break;
              case 'cancel':
                core.cancelCall(`c${o.pick % Math.max(1, seq)}`, 1, 'r');
                break;
              case 'spawn':
                core.expectSecret(SECRET);
                conn = core.connectionOpened(now);
                core.messageReceived(conn, now, hello(), 0);
                break;
              case 'heartbeat':
                if (conn !== undefined) core.messageReceived(conn, now, heartbeat, 0);
                break;
              case 'intruder': {
                const id = core.connectionOpened(now);
                core.messageReceived(id, now, hello('00'.repeat(32)), 0);
                break;
              }
              case 'drop':
                core.dropConnection('heartbeat timeout');
                break;
              case 'socketClosed':
                if (conn !== undefined) core.connectionClosed(conn);
                break;
              case 'tick':
                now += o.ms;
                core.tick(now);
                break;
            }
            collect();
            expect(core.inflight).toBeLessThanOrEqual(seq);
          }
          core.close();
          collect();
          expect(core.inflight).toBe(0);
          for (let i = 0; i < seq; i++) expect(terminal.get(`c${i}`), `c${i}`).toBe(1);
          expect(refusals).toBe(0); // every refusal announced was answered by exactly one refusal event
          // No frame ever went to a connection that was refused.
          const refused = new Set(
            log.flatMap((c) => (c.type === 'closeConnection' && c.refusal ? [c.conn] : [])),
          );
          expect(log.some((c) => 'conn' in c && c.type !== 'closeConnection' && refused.has(c.conn))).toBe(
            false,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

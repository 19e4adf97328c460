// ExecutorLink (src/services/call-host/adapters/executor-link.ts, the shell around core/link/) against a fake executor speaking the
// protocol over a real Unix socket in a temp dir.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EpochSnapshot, EpochSource } from '../../../src/executor/code-epochs.js';
import { CallAlreadyInFlightError } from '../../../src/executor/errors.js';
import { FrameDecoder, FrameWriter } from '../../../src/executor/frame-codec.js';
import { PROTOCOL_VERSION } from '../../../src/executor/protocol.js';
import {
  ExecutorLink,
  type ExecutorLinkEvent,
  type ExecutorLinkOptions,
} from '../../../src/services/call-host/adapters/executor-link.js';

type Msg = { type: string; [k: string]: unknown };

/** Resolves when `check` passes, re-checking whenever `signal` is called. */
class Waiter {
  private pending: { check: () => boolean; resolve: () => void }[] = [];
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.pending.push({ check, resolve }));
  }
  signal(): void {
    this.pending = this.pending.filter((p) => (p.check() ? (p.resolve(), false) : true));
  }
}

class FakeExecutor {
  readonly received: Msg[] = [];
  private readonly waiter = new Waiter();
  private readonly writer: FrameWriter;
  closed = false;
  constructor(readonly socket: Socket) {
    const decoder = new FrameDecoder<Msg>();
    this.writer = new FrameWriter(socket);
    socket.on('data', (c) => {
      this.received.push(...decoder.push(c));
      this.waiter.signal();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter.signal();
    });
  }
  static async connect(path: string): Promise<FakeExecutor> {
    const s = connect(path);
    await new Promise((r) => s.once('connect', r));
    return new FakeExecutor(s);
  }
  send(m: Msg): void {
    this.writer.send(m);
    this.writer.flush();
  }
  /** Several frames in one write (the link reads them together). */
  sendAll(ms: readonly Msg[]): void {
    for (const m of ms) this.writer.send(m);
    this.writer.flush();
  }
  /** Hello with a fresh spawn secret from the link (as the supervisor hands each executor it spawns). */
  hello(pid = 4242, protocolVersion = PROTOCOL_VERSION, features?: string[]): void {
    this.send({
      type: 'Hello',
      protocolVersion,
      executorVersion: '0.0.0-test',
      pid,
      threads: 2,
      functionsDir: '/f',
      secret: link.issueSecret(),
      ...(features === undefined ? {} : { features }),
    });
  }
  heartbeat(seq = 0): void {
    this.send({
      type: 'Heartbeat',
      seq,
      pid: 4242,
      inflight: 0,
      queued: 0,
      threads: 2,
      epochs: 0,
      rssBytes: 1,
    });
  }
  ready(): void {
    this.hello();
    this.heartbeat();
  }
  of(type: string): Msg[] {
    return this.received.filter((m) => m.type === type);
  }
  waitFor(type: string, count = 1): Promise<void> {
    return this.waiter.until(() => this.of(type).length >= count);
  }
  waitClosed(): Promise<void> {
    return this.waiter.until(() => this.closed);
  }
}

let dir: string;
let link: ExecutorLink;
let events: ExecutorLinkEvent[];
let waiter: Waiter;
const fakes: FakeExecutor[] = [];

function makeLink(options: Partial<ExecutorLinkOptions> = {}): ExecutorLink {
  link = new ExecutorLink({
    socketPath: join(dir, 'x.sock'),
    onEvent: (ev) => {
      events.push(ev);
      waiter.signal();
    },
    ...options,
  });
  return link;
}
const eventsOf = <T extends ExecutorLinkEvent['type']>(type: T) =>
  events.filter((e): e is Extract<ExecutorLinkEvent, { type: T }> => e.type === type);
const waitEvents = (type: ExecutorLinkEvent['type'], count = 1) =>
  waiter.until(() => eventsOf(type).length >= count);
async function fake(): Promise<FakeExecutor> {
  const f = await FakeExecutor.connect(join(dir, 'x.sock'));
  fakes.push(f);
  return f;
}
/** A listening link (default options) and a fake executor that is ready on it. */
async function readyExecutor(): Promise<FakeExecutor> {
  makeLink();
  await link.listen();
  const f = await fake();
  f.ready();
  await waitEvents('executorReady');
  return f;
}
const call = (i: number, extra: Partial<Parameters<ExecutorLink['executeCall']>[0]> = {}) => ({
  taskId: 'task-1',
  callId: `c${i}`,
  attempt: 1,
  function: 'noop',
  args: [i],
  codeEpoch: 'e1',
  budgetMs: 5000,
  ...extra,
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bx-link-'));
  events = [];
  waiter = new Waiter();
});
afterEach(async () => {
  for (const f of fakes.splice(0)) f.socket.destroy();
  await link?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ExecutorLink', () => {
  it('is ready only after the first heartbeat, holding calls until then', async () => {
    makeLink();
    await link.listen();
    link.executeCall(call(1));
    const f = await fake();
    f.hello();
    expect(link.ready).toBe(false);
    f.heartbeat();
    await waitEvents('executorReady');
    expect(eventsOf('executorReady')[0]).toEqual({
      type: 'executorReady',
      pid: 4242,
      executorVersion: '0.0.0-test',
      threads: 2,
    });
    await f.waitFor('ExecuteCall');
    expect(f.of('ExecuteCall')[0]).toEqual({
      type: 'ExecuteCall',
      taskId: 'task-1',
      callId: 'c1',
      attempt: 1,
      function: 'noop',
      args: [1],
      codeEpoch: 'e1',
      budgetMs: 5000,
    });
    expect(eventsOf('heartbeat')[0]).toMatchObject({ seq: 0, pid: 4242, threads: 2 });
  });

  it('turns executor frames into events carrying the task id', async () => {
    const f = await readyExecutor();
    link.executeCall(call(1));
    link.executeCall(call(2, { block: { number: 7 } }));
    await f.waitFor('ExecuteCall', 2);
    expect(f.of('ExecuteCall')[1]).toMatchObject({ block: { number: 7 } });
    f.send({ type: 'CallStarted', callId: 'c1', attempt: 1, elapsedMs: 30 });
    f.send({ type: 'CallCompleted', callId: 'c1', attempt: 1, value: 'v', durationMs: 2 });
    f.send({
      type: 'CallFailed',
      callId: 'c2',
      attempt: 1,
      kind: 'user',
      retryable: false,
      message: 'boom',
      stack: 'S',
      code: 'E',
    });
    await waitEvents('callFailed');
    expect(events.filter((e) => e.type.startsWith('call'))).toEqual([
      { type: 'callStarted', taskId: 'task-1', callId: 'c1', attempt: 1, elapsedMs: 30 },
      {
        type: 'callCompleted',
        taskId: 'task-1',
        callId: 'c1',
        attempt: 1,
        value: 'v',
        durationMs: 2,
        // The size of the frame that carried the value: what maxCollectedOutputBytes counts.
        outputBytes: Buffer.byteLength(
          JSON.stringify({ type: 'CallCompleted', callId: 'c1', attempt: 1, value: 'v', durationMs: 2 }),
        ),
      },
      {
        type: 'callFailed',
        taskId: 'task-1',
        callId: 'c2',
        attempt: 1,
        kind: 'user',
        retryable: false,
        message: 'boom',
        stack: 'S',
        code: 'E',
      },
    ]);
    expect(link.inflight).toBe(0);
    // Frames for attempts that are no longer in flight are ignored.
    f.send({ type: 'CallCompleted', callId: 'c1', attempt: 1, value: 'again', durationMs: 1 });
    f.heartbeat(1);
    await waitEvents('heartbeat', 2);
    expect(eventsOf('callCompleted')).toHaveLength(1);
  });

  it.each([
    { bulkResults: true, features: ['ExecuteCalls', 'CallsCompleted'], asks: true },
    { bulkResults: false, features: ['ExecuteCalls', 'CallsCompleted'], asks: false },
    { bulkResults: true, features: ['ExecuteCalls'], asks: false },
  ])(
    'bulkResults $bulkResults to an executor announcing $features: ExecuteCalls asks for CallsCompleted: $asks',
    async ({ bulkResults, features, asks }) => {
      const logs: string[] = [];
      makeLink({ bulkResults, log: (_level, message) => logs.push(message) });
      await link.listen();
      const f = await fake();
      f.hello(4242, PROTOCOL_VERSION, features);
      f.heartbeat();
      await waitEvents('executorReady');
      link.executeCalls([call(1), call(2), call(3)]);
      await f.waitFor('ExecuteCalls');
      const [frame] = f.of('ExecuteCalls');
      expect((frame!.calls as unknown[]).length).toBe(3);
      expect(frame!.bulkResults).toBe(asks ? true : undefined);
      if (!asks) return;
      const entry = (i: number) => ({ callId: `c${i}`, attempt: 1, value: i * 10, durationMs: 1 });
      const results = [entry(2), { callId: 'c1', attempt: 0, durationMs: 1 }, entry(1), entry(2)];
      const bulk = { type: 'CallsCompleted', taskId: 'task-1', results };
      f.send(bulk);
      f.send({ type: 'CallFailed', callId: 'c3', attempt: 1, kind: 'user', retryable: false, message: 'x' });
      await waitEvents('callFailed');
      // The malformed entry is dropped (and logged); the duplicate answers nothing; c3 failed alone.
      expect(eventsOf('callsCompleted')).toEqual([
        {
          type: 'callsCompleted',
          taskId: 'task-1',
          results: [entry(2), entry(1)],
          outputBytesEach: Math.ceil(Buffer.byteLength(JSON.stringify(bulk)) / 3),
        },
      ]);
      expect(eventsOf('callCompleted')).toEqual([]);
      expect(logs.some((l) => l.includes('malformed CallsCompleted entry'))).toBe(true);
      expect(link.inflight).toBe(0);
    },
  );

  it.each([
    ['all ASCII', ['a', 'b']],
    ['with multi-byte text', ['a', 'é 😀 ü']],
  ])('a success stands for the UTF-8 size of its frame, frames of one read %s', async (_, values) => {
    const f = await readyExecutor();
    link.executeCall(call(1));
    link.executeCall(call(2));
    await f.waitFor('ExecuteCall', 2);
    const frames = values.map((value, i) => ({
      type: 'CallCompleted',
      callId: `c${i + 1}`,
      attempt: 1,
      value,
      durationMs: 1,
    }));
    f.sendAll(frames);
    await waitEvents('callCompleted', 2);
    expect(eventsOf('callCompleted').map((e) => e.outputBytes)).toEqual(
      frames.map((m) => Buffer.byteLength(JSON.stringify(m))),
    );
  });

  it('on executor loss emits executorLost, then a retryable executor_crash for each sent attempt, and queues new calls for the next executor', async () => {
    makeLink();
    await link.listen();
    const f1 = await fake();
    f1.ready();
    await waitEvents('executorReady');
    for (let i = 0; i < 3; i++) link.executeCall(call(i));
    await f1.waitFor('ExecuteCall', 3);
    f1.send({ type: 'CallCompleted', callId: 'c0', attempt: 1, value: null, durationMs: 1 });
    await waitEvents('callCompleted');
    f1.socket.destroy();
    await waitEvents('callFailed', 2);
    const lostAt = events.findIndex((e) => e.type === 'executorLost');
    expect(events[lostAt]).toMatchObject({ type: 'executorLost', pid: 4242, failedAttempts: 2 });
    expect(
      events.slice(lostAt + 1).map((e) => e.type === 'callFailed' && [e.callId, e.kind, e.retryable]),
    ).toEqual([
      ['c1', 'executor_crash', true],
      ['c2', 'executor_crash', true],
    ]);
    expect(link.ready).toBe(false);

    link.executeCall(call(1, { attempt: 2 }));
    const f2 = await fake();
    f2.ready();
    await f2.waitFor('ExecuteCall');
    expect(f2.of('ExecuteCall')[0]).toMatchObject({ callId: 'c1', attempt: 2 });
  });

  it('fails calls at once while down when queueWhileDown is false', async () => {
    makeLink({ queueWhileDown: false });
    await link.listen();
    link.executeCall(call(1));
    expect(events).toEqual([]); // never from inside the command
    await waitEvents('callFailed');
    expect(eventsOf('callFailed')[0]).toMatchObject({
      kind: 'executor_crash',
      retryable: true,
      message: 'no executor is ready',
    });
  });

  it('cancels a queued call locally and a sent one with CancelCall', async () => {
    makeLink();
    await link.listen();
    link.executeCall(call(1));
    link.cancelCall('c1', 1, 'task timed out');
    await waitEvents('callFailed');
    expect(eventsOf('callFailed')[0]).toMatchObject({
      callId: 'c1',
      kind: 'deadline',
      retryable: true,
      message: 'cancelled before it was sent (task timed out)',
    });
    const f = await fake();
    f.ready();
    await waitEvents('executorReady');
    link.executeCall(call(2));
    link.cancelCall('c2', 1, 'deadline');
    await f.waitFor('CancelCall');
    expect(f.of('ExecuteCall').map((m) => m.callId)).toEqual(['c2']);
    expect(f.of('CancelCall')[0]).toEqual({
      type: 'CancelCall',
      callId: 'c2',
      attempt: 1,
      reason: 'deadline',
    });
  });

  it('refuses a second executeCall for an attempt in flight', async () => {
    makeLink();
    await link.listen();
    link.executeCall(call(1));
    expect(() => link.executeCall(call(1))).toThrow(CallAlreadyInFlightError);
    expect(() => link.executeCall(call(1, { attempt: 2 }))).not.toThrow();
  });

  it('serves waiting requests through onWaiting and resumes with the right request id', async () => {
    makeLink({
      onWaiting: (req) =>
        req.request.kind === 'io'
          ? req.request.op === 'get'
            ? Promise.resolve({ ok: true, value: { row: req.request.key } })
            : Promise.reject(Object.assign(new Error('backend down'), { retryable: true }))
          : undefined,
    });
    await link.listen();
    const f = await fake();
    f.ready();
    await waitEvents('executorReady');
    link.executeCall(call(1));
    await f.waitFor('ExecuteCall');
    f.send({
      type: 'CallWaiting',
      taskId: 'task-1',
      callId: 'c1',
      attempt: 1,
      requestId: 1,
      request: { kind: 'io', op: 'get', table: 't', key: 'k' },
    });
    f.send({
      type: 'CallWaiting',
      taskId: 'task-1',
      callId: 'c1',
      attempt: 1,
      requestId: 2,
      request: { kind: 'io', op: 'scan', table: 't', options: {} },
    });
    f.send({
      type: 'CallWaiting',
      taskId: 'task-1',
      callId: 'c1',
      attempt: 1,
      requestId: 3,
      request: { kind: 'subcall', function: 'child', args: [1] },
    });
    await f.waitFor('ResumeCall', 2);
    const resumes = f.of('ResumeCall').sort((a, b) => (a.requestId as number) - (b.requestId as number));
    expect(resumes).toEqual([
      { type: 'ResumeCall', callId: 'c1', attempt: 1, requestId: 1, ok: true, value: { row: 'k' } },
      {
        type: 'ResumeCall',
        callId: 'c1',
        attempt: 1,
        requestId: 2,
        ok: false,
        error: { message: 'backend down', kind: 'io', retryable: true },
      },
    ]);
    expect(eventsOf('callWaiting').map((e) => e.requestId)).toEqual([1, 2, 3]);
    // The subcall was left to the dispatcher: it answers without a request id (oldest open request).
    link.resumeCall('c1', 1, { ok: true, value: 10 });
    await f.waitFor('ResumeCall', 3);
    expect(f.of('ResumeCall')[2]).toEqual({
      type: 'ResumeCall',
      callId: 'c1',
      attempt: 1,
      requestId: 3,
      ok: true,
      value: 10,
    });
    // Unknown requests are ignored.
    link.resumeCall('c1', 1, { requestId: 99, ok: true, value: 0 });
    link.resumeCall('nope', 1, { ok: true });
  });

  it('defines an epoch once per connection before its first call, and forwards retirements', async () => {
    const snap: EpochSnapshot = {
      id: 'e1',
      functionsDir: '/f',
      files: [{ name: 'noop', fileName: 'noop.ts', source: 'x' }],
    };
    let retire: (epoch: string) => void = () => {};
    const epochs: EpochSource = {
      snapshot: (e) => (e === 'e1' ? snap : undefined),
      onRetire: (l) => ((retire = l), () => {}),
    };
    makeLink({ epochs });
    await link.listen();
    const f = await fake();
    f.ready();
    await waitEvents('executorReady');
    link.executeCall(call(1));
    link.executeCall(call(2));
    link.executeCall(call(3, { codeEpoch: 'unknown-to-view' }));
    await f.waitFor('ExecuteCall', 3);
    expect(f.received.filter((m) => m.type !== 'Heartbeat').map((m) => m.type)).toEqual([
      'DefineEpoch',
      'ExecuteCall',
      'ExecuteCall',
      'ExecuteCall',
    ]);
    expect(f.of('DefineEpoch')[0]).toEqual({
      type: 'DefineEpoch',
      epoch: 'e1',
      functionsDir: '/f',
      files: snap.files,
    });
    retire('e1');
    retire('never-sent');
    await f.waitFor('RetireEpoch');
    expect(f.of('RetireEpoch')).toEqual([{ type: 'RetireEpoch', epoch: 'e1' }]);
  });

  it('drops an executor that speaks another protocol version', async () => {
    makeLink();
    await link.listen();
    const f = await fake();
    f.hello(1, PROTOCOL_VERSION + 1);
    await f.waitClosed();
    expect(f.of('Shutdown')[0]).toMatchObject({ reason: 'protocol version mismatch' });
    expect(link.ready).toBe(false);
  });

  it('serves only a Hello with the spawn secret, used once; others get nothing and displace nothing', async () => {
    const warnings: string[] = [];
    makeLink({ log: (level, message) => void (level === 'warn' && warnings.push(message)) });
    await link.listen();
    const f = await fake();
    f.ready();
    await waitEvents('executorReady');
    const secret = link.issueSecret(); // the next spawn's; each impostor below presents something else
    const impostors = await Promise.all([fake(), fake(), fake(), fake()]);
    impostors[0]!.send({ type: 'Hello', protocolVersion: PROTOCOL_VERSION, pid: 1, threads: 1 });
    impostors[1]!.send({ type: 'Hello', protocolVersion: PROTOCOL_VERSION, pid: 1, secret: 'f'.repeat(64) });
    impostors[2]!.heartbeat();
    impostors[3]!.send({ type: 'Hello', protocolVersion: PROTOCOL_VERSION, pid: 1, secret: `${secret}0` });
    await Promise.all(impostors.map((i) => i.waitClosed()));
    link.executeCall(call(1));
    await f.waitFor('ExecuteCall');
    expect(impostors.map((i) => i.received)).toEqual([[], [], [], []]);
    expect(link.ready).toBe(true);
    expect(eventsOf('executorLost')).toHaveLength(0);
    expect(warnings).toHaveLength(4);
    expect(warnings.join('\n')).not.toContain(secret);
    // The real next executor, with the secret, does take over.
    const next = await fake();
    next.send({
      type: 'Hello',
      protocolVersion: PROTOCOL_VERSION,
      pid: 7,
      threads: 1,
      functionsDir: '/f',
      secret,
    });
    next.heartbeat();
    await waitEvents('executorLost');
    await waiter.until(() => link.executorPid === 7);
    expect(eventsOf('executorLost')[0]).toMatchObject({ reason: 'superseded by a new executor connection' });
  });

  it('close() fails what is in flight or queued and removes the socket file', async () => {
    makeLink();
    await link.listen();
    const path = join(dir, 'x.sock');
    expect(existsSync(path)).toBe(true);
    const f = await fake();
    f.ready();
    await waitEvents('executorReady');
    link.executeCall(call(1));
    await f.waitFor('ExecuteCall');
    await link.close();
    expect(eventsOf('callFailed').map((e) => [e.callId, e.kind, e.retryable])).toEqual([
      ['c1', 'executor_crash', true],
    ]);
    expect(existsSync(path)).toBe(false);
    link.executeCall(call(2));
    await waitEvents('callFailed', 2);
    expect(eventsOf('callFailed')[1]).toMatchObject({ callId: 'c2', message: 'executor link is closed' });
  });

  it('fails a call whose arguments do not fit in a frame, without sending it', async () => {
    makeLink({ maxFrameBytes: 512 });
    await link.listen();
    const f = await fake();
    f.ready();
    await waitEvents('executorReady');
    link.executeCall(call(1, { args: ['x'.repeat(1000)] }));
    link.executeCall(call(2));
    await waitEvents('callFailed');
    expect(eventsOf('callFailed')[0]).toMatchObject({ callId: 'c1', kind: 'user', retryable: false });
    expect(eventsOf('callFailed')[0]!.message).toMatch(
      /^cannot send the call to the executor: cannot send a frame of \d+ bytes/,
    );
    await f.waitFor('ExecuteCall');
    expect(f.of('ExecuteCall').map((m) => m.callId)).toEqual(['c2']);
    expect(link.inflight).toBe(1);
  });
});

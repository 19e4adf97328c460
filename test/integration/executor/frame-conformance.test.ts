// The same frames, the same answers: test/support/executor-frame-conformance.ts run against the JS
// executor (from src/ under tsx) and the Python executor, each played by a test that is the Worker at
// the socket. Plus what every executor does at the edges of the protocol: the handshake, a frame
// over the limit, a payload that is not JSON, Shutdown.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pythonExecutorCommand } from '../../../src/executor/python-command.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../../../src/executor/frame-codec.js';
import { tsxExecutorCommand } from '../../../src/services/call-host/adapters/executor-supervisor.js';
import { CONFORMANCE_ROWS, FrameSession, type Language } from '../../support/executor-frame-conformance.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const COMMANDS: Record<Language, () => string[]> = {
  js: tsxExecutorCommand,
  python: () => pythonExecutorCommand(),
};

describe.each(['js', 'python'] as const)('%s executor frame conformance', (language) => {
  let s: FrameSession;

  beforeAll(async () => {
    s = new FrameSession(language, COMMANDS[language]());
    await s.start();
  });

  afterAll(async () => {
    await s?.stop();
  });

  it('says Hello with the spawn secret, then heartbeats (ready)', () => {
    expect(s.hello).toMatchObject({
      type: 'Hello',
      protocolVersion: 1,
      executorVersion: expect.any(String),
      pid: expect.any(Number),
      threads: 2,
      functionsDir: s.functionsDir,
      secret: s.secret,
      features: expect.arrayContaining(['ExecuteCalls']),
    });
    expect(s.firstHeartbeat).toMatchObject({
      type: 'Heartbeat',
      seq: 0,
      pid: s.hello!.pid,
      inflight: 0,
      queued: 0,
      threads: 2,
      epochs: expect.any(Number),
      rssBytes: expect.any(Number),
    });
    expect(s.firstHeartbeat!.rssBytes as number).toBeGreaterThan(1024 * 1024);
  });

  it('answers bulkResults as its Hello says: CallsCompleted if it announced it, else CallCompleted frames; failures stay CallFailed', async () => {
    const bulk = ((s.hello!.features as string[] | undefined) ?? []).includes('CallsCompleted');
    // The JS executor announces it; the Python Executor does not, so a Worker never asks it.
    expect(bulk).toBe(language === 'js');
    const frame = (fn: string, calls: object[]) => ({
      type: 'ExecuteCalls',
      taskId: 'task-bulk',
      function: fn,
      codeEpoch: 'EPOCH',
      budgetMs: 10_000,
      bulkResults: true,
      calls,
    });
    s.send([
      frame('conf_echo', [
        { callId: 'bulk-1', attempt: 1, args: [1] },
        { callId: 'bulk-2', attempt: 2, args: ['two'] },
        { callId: 'bulk-3', attempt: 1, args: [] },
      ]),
      frame('conf_throw', [{ callId: 'bulk-4', attempt: 1, args: [] }]),
    ]);
    const terminals = new Map<string, Record<string, unknown>[]>();
    const seen = () => {
      for (const f of s.frames.splice(0)) {
        // CallStarted says an attempt is still running after 25 ms (a loaded machine): progress, not a terminal.
        if (f.type === 'CallStarted') continue;
        const entries =
          f.type === 'CallsCompleted'
            ? (expect(f.taskId).toBe('task-bulk'), f.results as Record<string, unknown>[])
            : [f];
        for (const e of entries) {
          const key = `${String(e.callId)}#${String(e.attempt)}`;
          terminals.set(key, [...(terminals.get(key) ?? []), { ...e, via: f.type }]);
        }
      }
      return terminals.size >= 4;
    };
    await s.waitFor(seen, 10_000, 'a terminal for each of 4 attempts');
    await new Promise((r) => setTimeout(r, 100));
    seen();
    const ok = bulk ? 'CallsCompleted' : 'CallCompleted';
    expect(Object.fromEntries(terminals)).toEqual({
      'bulk-1#1': [
        {
          via: ok,
          ...(bulk ? {} : { type: ok }),
          callId: 'bulk-1',
          attempt: 1,
          value: expect.objectContaining({ args: [1], callId: 'bulk-1' }),
          durationMs: expect.any(Number),
        },
      ],
      'bulk-2#2': [
        {
          via: ok,
          ...(bulk ? {} : { type: ok }),
          callId: 'bulk-2',
          attempt: 2,
          value: expect.objectContaining({ args: ['two'], attempt: 2 }),
          durationMs: expect.any(Number),
        },
      ],
      'bulk-3#1': [
        {
          via: ok,
          ...(bulk ? {} : { type: ok }),
          callId: 'bulk-3',
          attempt: 1,
          value: expect.objectContaining({ args: [] }),
          durationMs: expect.any(Number),
        },
      ],
      'bulk-4#1': [expect.objectContaining({ via: 'CallFailed', kind: 'user', retryable: false })],
    });
  });

  it('answers 1,200 bulkResults attempts over both threads once each, a slow one started and cancelled on its own', async () => {
    const bulk = ((s.hello!.features as string[] | undefined) ?? []).includes('CallsCompleted');
    const frames = [0, 1, 2, 3].map((f) => ({
      type: 'ExecuteCalls',
      taskId: `task-many-${f % 2}`,
      function: 'conf_none',
      codeEpoch: 'EPOCH',
      budgetMs: 10_000,
      bulkResults: true,
      calls: Array.from({ length: 300 }, (_, i) => ({ callId: `m-${f}-${i}`, attempt: 1, args: [] })),
    }));
    const slow = {
      type: 'ExecuteCalls',
      taskId: 'task-many-0',
      function: 'conf_sleep',
      codeEpoch: 'EPOCH',
      budgetMs: 10_000,
      bulkResults: true,
      calls: [{ callId: 'm-slow', attempt: 1, args: [20_000] }],
    };
    s.send([frames[0]!, slow, ...frames.slice(1)]);
    const seen = new Map<string, number>();
    let containers = 0;
    let started = false;
    const read = () => {
      for (const f of s.frames.splice(0)) {
        if (f.type === 'CallStarted') {
          // The slow call must be reported started; on a loaded machine a quick one may be too (it
          // ran past 25 ms), which says nothing wrong.
          if (f.callId === 'm-slow') started = true;
          continue;
        }
        containers++;
        const entries =
          f.type === 'CallsCompleted' ? (f.results as { callId: string }[]) : [f as { callId: string }];
        for (const e of entries) seen.set(e.callId, (seen.get(e.callId) ?? 0) + 1);
      }
      return seen.size >= 1_200 && started;
    };
    await s.waitFor(read, 30_000, '1,200 terminals and a CallStarted');
    expect(seen.has('m-slow')).toBe(false);
    s.send([{ type: 'CancelCall', callId: 'm-slow', attempt: 1, reason: 'deadline' }]);
    await s.waitFor(() => (read(), seen.has('m-slow')), 10_000, 'the slow call to fail');
    await new Promise((r) => setTimeout(r, 100));
    read();
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(seen.size).toBe(1_201);
    // In bulk, far fewer frames than attempts; one frame per attempt otherwise.
    if (bulk) expect(containers).toBeLessThan(200);
    else expect(containers).toBe(1_201);
  });

  it('takes arguments as JSON text (argsJson) where it announces ArgsJson; a bad text fails its attempt alone', async () => {
    const features = (s.hello!.features as string[] | undefined) ?? [];
    // The JS executor announces it; the Python Executor does not, so a Worker never sends it there.
    expect(features.includes('ArgsJson')).toBe(language === 'js');
    if (!features.includes('ArgsJson')) return;
    s.send([
      {
        type: 'ExecuteCalls',
        taskId: 'task-aj',
        function: 'conf_echo',
        codeEpoch: 'EPOCH',
        budgetMs: 10_000,
        calls: [
          { callId: 'aj-1', attempt: 1, argsJson: '[1,{"b":"é\\"x"}]' },
          { callId: 'aj-2', attempt: 1, argsJson: '{"not":"an array"}' },
          { callId: 'aj-3', attempt: 1, argsJson: '[1,' },
          { callId: 'aj-both', attempt: 1, args: [], argsJson: '[]' },
          { callId: 'aj-4', attempt: 2, args: ['plain'] },
        ],
      },
    ]);
    const got = await s.take(4);
    const byId = Object.fromEntries(got.map((f) => [f.callId as string, f]));
    expect(byId).toMatchObject({
      'aj-1': { type: 'CallCompleted', value: { args: [1, { b: 'é"x' }], callId: 'aj-1' } },
      'aj-2': { type: 'CallFailed', kind: 'user', retryable: false, code: 'FRAME_INVALID' },
      'aj-3': { type: 'CallFailed', kind: 'user', retryable: false, code: 'FRAME_INVALID' },
      'aj-4': { type: 'CallCompleted', attempt: 2, value: { args: ['plain'] } },
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(s.frames).toEqual([]); // the entry with both was dropped as malformed
  });

  it.each(CONFORMANCE_ROWS.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    for (const step of row.steps) {
      if ('send' in step) {
        s.send(step.send);
        continue;
      }
      const got = await s.take(step.expect.length);
      const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
        String(a.callId).localeCompare(String(b.callId));
      if (step.byCallId) expect([...got].sort(byId)).toMatchObject([...step.expect].sort(byId));
      else expect(got).toMatchObject(step.expect);
      for (const f of got) for (const field of step.absent ?? []) expect(f).not.toHaveProperty(field);
      if (step.quietMs) {
        await new Promise((r) => setTimeout(r, step.quietMs));
        expect(s.frames).toEqual([]);
      }
    }
  });
});

describe.each(['js', 'python'] as const)('%s executor at the protocol edges', (language) => {
  const sessions: FrameSession[] = [];
  const open = async () => {
    const s = new FrameSession(language, COMMANDS[language]());
    sessions.push(s);
    await s.start();
    return s;
  };

  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.stop()));
  });

  it('closes the connection on a frame declared over the limit, and exits', async () => {
    const s = await open();
    const header = Buffer.alloc(4);
    header.writeUInt32BE(DEFAULT_MAX_FRAME_BYTES + 1);
    s.writeRaw(header);
    await s.waitFor(() => s.closed, 10_000, 'close');
    expect(await s.exited()).toBe(0);
  });

  it('closes the connection on a payload that is not a JSON object with a type', async () => {
    const s = await open();
    const body = Buffer.from('{"no": "type"}');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    s.writeRaw(Buffer.concat([header, body]));
    await s.waitFor(() => s.closed, 10_000, 'close');
    expect(await s.exited()).toBe(0);
  });

  it('Shutdown lets a running call finish within graceMs, then exits 0', async () => {
    const s = await open();
    s.send([
      {
        type: 'ExecuteCall',
        taskId: 't',
        callId: 'grace-1',
        attempt: 1,
        function: 'conf_sleep',
        args: [150],
        codeEpoch: 'EPOCH',
        budgetMs: 5000,
      },
      { type: 'Shutdown', reason: 'test', graceMs: 5_000 },
    ]);
    const frames = await s.take(2).catch(() => s.frames);
    expect(frames.filter((f) => f.type === 'CallCompleted')).toMatchObject([
      { callId: 'grace-1', value: 'slept' },
    ]);
    expect(await s.exited()).toBe(0);
  });
});

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  USER_STACK_MAX_FRAMES,
  classifyError,
  completedEntry,
  completedFrame,
  failedFrame,
  userStackFrames,
} from '../../../src/executor/call-outcome.js';
import { CallWaitError, RetryableError } from '../../../src/executor/sdk.js';

const id = { callId: 'c1', attempt: 2 };

describe('classifyError', () => {
  it.each([
    ['a plain error', new Error('boom'), undefined, { kind: 'user', retryable: false, message: 'boom' }],
    [
      'a RetryableError',
      new RetryableError('later'),
      undefined,
      { kind: 'user', retryable: true, message: 'later' },
    ],
    [
      'any error flagged retryable, with its code',
      Object.assign(new Error('x'), { retryable: true, code: 'E1' }),
      undefined,
      { kind: 'user', retryable: true, code: 'E1' },
    ],
    ['a thrown string', 'just text', undefined, { kind: 'user', retryable: false, message: 'just text' }],
    [
      'an IO failure that escaped',
      new CallWaitError('db down', { kind: 'io', retryable: true, code: 'IO' }),
      undefined,
      { kind: 'io', retryable: true, code: 'IO' },
    ],
    [
      'a failed subcall that escaped',
      new CallWaitError('child failed', { kind: 'user', retryable: false }),
      undefined,
      { kind: 'user', retryable: false },
    ],
    [
      'anything after a cancellation',
      new Error('aborted'),
      'deadline',
      { kind: 'deadline', retryable: true, message: 'cancelled (deadline): aborted' },
    ],
  ])('%s', (_name, err, cancelReason, expected) => {
    expect(classifyError(err, cancelReason)).toMatchObject(expected);
  });
});

describe('outcome frames', () => {
  it('serialises a completed value', () => {
    expect(JSON.parse(completedFrame(id, { a: [1, 'x'] }, 1.5, 1 << 20))).toEqual({
      type: 'CallCompleted',
      callId: 'c1',
      attempt: 2,
      value: { a: [1, 'x'] },
      durationMs: 1.5,
    });
  });

  it('turns a value JSON cannot carry into a user failure', () => {
    const f = JSON.parse(completedFrame(id, { n: 10n }, 0, 1 << 20));
    expect(f).toMatchObject({ type: 'CallFailed', kind: 'user', retryable: false });
    expect(f.message).toMatch(/^the return value is not JSON-serialisable/);
  });

  it('turns a value over the frame limit into a user failure', () => {
    const f = JSON.parse(completedFrame(id, 'x'.repeat(2000), 0, 1000));
    expect(f).toMatchObject({ type: 'CallFailed', kind: 'user', retryable: false });
    expect(f.message).toMatch(/too large: \d+ bytes serialised, the frame limit is 1000/);
  });

  it('property: a CallsCompleted entry is its CallCompleted without the type, and fails exactly when that frame would', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.constant(10n),
          fc.string({ unit: 'grapheme', maxLength: 80 }),
        ),
        fc.integer({ min: 40, max: 400 }),
        fc.nat(3),
        (value, max, ioHits) => {
          const frame = JSON.parse(completedFrame(id, value, 1, max, ioHits));
          const entry = completedEntry(id, value, 1, max, ioHits);
          if (frame.type === 'CallCompleted') {
            const { type: _type, ...rest } = frame;
            expect(entry.ok).toBe(true);
            expect(JSON.parse(entry.json)).toEqual(rest);
          } else {
            expect(entry.ok).toBe(false);
            expect(JSON.parse(entry.json)).toEqual(frame);
          }
        },
      ),
    );
  });

  it('truncates huge messages and stacks', () => {
    const f = JSON.parse(failedFrame(id, { kind: 'user', retryable: false, message: 'm'.repeat(40_000) }));
    expect(f.message.length).toBeLessThan(17_000);
    expect(f.message).toMatch(/more characters\)$/);
  });
});

/** A Proxy whose every trap throws something that itself cannot be read. */
function hostileProxy(): object {
  const boom = (): never => {
    throw Object.create(null);
  };
  return new Proxy({}, { get: boom, getPrototypeOf: boom, ownKeys: boom, has: boom });
}

describe('readThrown: thrown values that run code when read (issue 16: they made calls hang)', () => {
  const revoked = (() => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    return r.proxy;
  })();
  const getters = {
    get message(): string {
      throw new Error('no');
    },
    get retryable(): boolean {
      throw hostileProxy();
    },
    toString(): string {
      throw hostileProxy();
    },
  };
  it.each<[string, unknown, RegExp]>([
    ['a Proxy with throwing traps', hostileProxy(), /threw a Proxy \(not an Error\)/],
    ['a revoked Proxy', revoked, /threw a Proxy/],
    ['an object without a prototype', Object.create(null), /non-Error value \(\[object Object\]\)/],
    ['an object whose getters and toString throw', getters, /non-Error value \(\[object Object\]\)/],
    ['a plain object', { a: 1 }, /non-Error value \(\[object Object\]\)/],
    ['an object with a useful toString', { toString: () => 'custom text' }, /^custom text$/],
    ['a symbol', Symbol('s'), /^Symbol\(s\)$/],
    ['undefined', undefined, /^undefined$/],
    ['null', null, /^null$/],
    ['a function', () => 1, /=>/],
  ])('%s', (_name, err, message) => {
    const f = classifyError(err, undefined);
    expect(f).toMatchObject({ kind: 'user', retryable: false });
    expect(f.message).toMatch(message);
    expect(() => JSON.parse(failedFrame(id, f))).not.toThrow();
  });

  it('a hostile value after a cancellation still classifies as deadline', () => {
    expect(classifyError(hostileProxy(), 'deadline')).toMatchObject({ kind: 'deadline', retryable: true });
  });

  it('a return value whose serialisation throws a hostile value becomes a user failure', () => {
    const value = new Proxy(
      {},
      {
        get: () => {
          throw hostileProxy();
        },
      },
    );
    const f = JSON.parse(completedFrame(id, value, 0, 1 << 20));
    expect(f).toMatchObject({ type: 'CallFailed', kind: 'user' });
    expect(f.message).toContain('not JSON-serialisable: the function threw a Proxy');
  });

  it('property: classifyError never throws and always gives a string message', () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withNullPrototype: true, withMap: true, withSet: true }),
        fc.boolean(),
        (v, wrap) => {
          const err = wrap
            ? new Proxy(v !== null && typeof v === 'object' ? v : {}, {
                get: () => {
                  throw v;
                },
              })
            : v;
          const f = classifyError(err, undefined);
          expect(typeof f.message).toBe('string');
          expect(() => failedFrame(id, f)).not.toThrow();
        },
      ),
    );
  });
});

describe('userStackFrames: only the function author’s own frames travel', () => {
  const root = path.resolve(import.meta.dirname, '../../..');
  const stack = [
    'Error: bad input 1',
    '    at inner (file:///srv/app/functions/thrower.ts?blockx-epoch=0fa69285:2:9)',
    '    at thrower (/srv/app/functions/thrower.ts:5:10)',
    '    at helper (/srv/app/node_modules/lodash/lodash.js:10:3)',
    `    at runCall (${root}/dist/executor/call-runner-thread.js:120:7)`,
    `    at runCall (${root}/src/executor/call-runner-thread.ts:120:7)`,
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    '    at new Promise (<anonymous>)',
    '    at async Promise.all (index 0)',
    '    at /srv/app/functions/anon.mjs:3:1',
  ].join('\n');

  it('keeps the frames in user files, as paths without the epoch query', () => {
    expect(userStackFrames(stack)).toBe(
      [
        '    at inner (/srv/app/functions/thrower.ts:2:9)',
        '    at thrower (/srv/app/functions/thrower.ts:5:10)',
        '    at /srv/app/functions/anon.mjs:3:1',
      ].join('\n'),
    );
  });

  it.each([
    ['no stack', undefined],
    ['only internal frames', 'Error: x\n    at node:internal/x:1:1\n    at new Promise (<anonymous>)'],
    ['a message without frames', 'just text'],
  ])('%s → undefined', (_name, s) => {
    expect(userStackFrames(s)).toBeUndefined();
  });

  it(`keeps at most ${USER_STACK_MAX_FRAMES} frames of bounded length`, () => {
    const deep = [
      'Error: deep',
      ...Array.from({ length: 50 }, (_, i) => `    at f${i} (/fn/${'x'.repeat(500)}.ts:${i + 1}:1)`),
    ];
    const frames = userStackFrames(deep.join('\n'))!.split('\n');
    expect(frames).toHaveLength(USER_STACK_MAX_FRAMES);
    expect(frames.every((f) => f.length <= 304)).toBe(true);
  });

  it('classifyError sends the user frames as the failure stack', () => {
    const err = new Error('boom');
    err.stack = stack;
    expect(classifyError(err, undefined).stack).toBe(userStackFrames(stack));
  });
});

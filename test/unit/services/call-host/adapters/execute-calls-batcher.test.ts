// ExecuteCallsBatcher (docs/executor.md § Calls in bulk): attempts sent in one turn with the same task-level
// fields travel as one ExecuteCalls frame, and the executor's reading of the frames (executeCallsOf) is
// exactly the ExecuteCall frames sent one by one, in the same order, around the same other frames.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BytesRow,
  encodedArgsList,
  encodedArgsText,
  encodedRowArgs,
  encodeRow,
} from '../../../../../src/contracts/call-args.js';
import { FrameTooLargeError } from '../../../../../src/executor/errors.js';
import { executeCallsOf } from '../../../../../src/executor/executor-main.js';
import { FrameDecoder, FrameWriter } from '../../../../../src/executor/frame-codec.js';
import type { ExecuteCallCommand } from '../../../../../src/services/call-host/adapters/executor-link.js';
import {
  ExecuteCallsBatcher,
  executeCallJson,
} from '../../../../../src/services/call-host/adapters/frames-as-text.js';
import { tenantKey } from '../../../../../src/services/call-host/adapters/tenant-key.js';
import { ANONYMOUS_CLIENT } from '../../../../../src/kernel/client-identity.js';

type Frame = Record<string, unknown> & { type: string };

/** The attachment a decoded frame came with (ArgsBytes), kept beside it for asExecuted. */
const attachments = new WeakMap<Frame, Uint8Array>();

/** A writer into memory, and what it wrote, decoded (frames with an attachment too). */
function wire(
  maxFrameBytes?: number,
  bulkResults = false,
  argsJson = false,
  tenants = false,
  argsBytes = false,
) {
  const chunks: Buffer[] = [];
  const writer = new FrameWriter({ write: (b) => (chunks.push(b), true) }, { maxFrameBytes });
  const frames = (): Frame[] => {
    writer.flush();
    const decoder = new FrameDecoder<Frame>({ attachments: true });
    return chunks.flatMap((c) =>
      decoder.pushFrames(c).map((raw) => {
        if (typeof raw === 'string') return JSON.parse(raw) as Frame;
        const f = JSON.parse(raw.json) as Frame;
        attachments.set(f, raw.attachment);
        return f;
      }),
    );
  };
  return {
    writer,
    batcher: new ExecuteCallsBatcher(writer, bulkResults, argsJson, tenants, argsJson, argsBytes),
    frames,
  };
}

/** What the executor runs for these frames: each ExecuteCalls expanded, other frames as they are. */
function asExecuted(frames: readonly Frame[]): Frame[] {
  return frames.flatMap((f) =>
    f.type === 'ExecuteCalls'
      ? (executeCallsOf(
          f as never,
          (problem) => {
            throw new Error(problem);
          },
          attachments.get(f),
        ) as unknown as Frame[])
      : [f],
  );
}

/** A row as storage reads it on SQLite (bytes), and its call arguments `[row, ...extra]`. */
const bytesArgs = (row: unknown, extra: unknown[] = []) =>
  encodedRowArgs(extra)(new BytesRow(new TextEncoder().encode(JSON.stringify(row)), {}));

const BLOCK = Object.freeze({ number: 7, hash: '0xab' });
const cmd = (i: number, over: Partial<ExecuteCallCommand> = {}): ExecuteCallCommand => ({
  taskId: 't1',
  callId: `t1/${i}`,
  attempt: 1,
  function: 'f',
  args: [{ row: i }],
  block: BLOCK,
  codeEpoch: 'e1',
  budgetMs: 5000,
  ioCache: 't1#1',
  ...over,
});

describe('ExecuteCallsBatcher', () => {
  it.each([
    {
      name: 'attempts with the same task-level fields share one frame',
      calls: [cmd(0), cmd(1), cmd(2, { attempt: 2 })],
      frames: 1,
    },
    {
      name: 'an equal block object (a fresh one per call) shares the frame',
      calls: [cmd(0), cmd(1, { block: { number: 7, hash: '0xab' } }), cmd(2, { block: { ...BLOCK } })],
      frames: 1,
    },
    {
      name: 'another block opens a new frame, and so does a block after none',
      calls: [cmd(0), cmd(1, { block: { number: 8 } }), cmd(2, { block: undefined }), cmd(3)],
      frames: 4,
    },
    { name: 'another budget opens a new frame', calls: [cmd(0), cmd(1, { budgetMs: 10 })], frames: 2 },
    { name: 'another task opens a new frame', calls: [cmd(0), cmd(1, { taskId: 't2' })], frames: 2 },
    {
      name: 'no block and no ioCache travel as absent fields',
      calls: [cmd(0, { block: undefined, ioCache: undefined }), cmd(1, { block: null, ioCache: undefined })],
      frames: 1,
    },
  ])('$name', ({ calls, frames: n }) => {
    const w = wire();
    for (const c of calls) w.batcher.add(c);
    const frames = w.frames();
    expect(frames).toHaveLength(n);
    expect(frames.every((f) => f.type === 'ExecuteCalls')).toBe(true);
    expect(asExecuted(frames)).toEqual(calls.map((c) => JSON.parse(executeCallJson(c)) as Frame));
  });

  it('carries the tenant only to an executor that announced Tenants; another tenant opens a new frame', () => {
    const calls = [cmd(0, { tenant: 'k1' }), cmd(1, { tenant: 'k1' }), cmd(2, { tenant: 'k2' })];
    const on = wire(undefined, false, false, true);
    for (const c of calls) on.batcher.add(c);
    const framesOn = on.frames();
    expect(framesOn.map((f) => [f.tenant, (f.calls as unknown[]).length])).toEqual([
      ['k1', 2],
      ['k2', 1],
    ]);
    const off = wire();
    for (const c of calls) off.batcher.add(c);
    const framesOff = off.frames();
    expect(framesOff.every((f) => !('tenant' in f))).toBe(true);
  });

  it('tenantKey: one opaque key per submitter, anonymous tasks share one', () => {
    expect(tenantKey('alice')).toBe(tenantKey('alice'));
    expect(tenantKey('alice')).not.toBe(tenantKey('mallory'));
    expect(tenantKey(undefined)).toBe(tenantKey(ANONYMOUS_CLIENT));
    expect(tenantKey('alice')).not.toContain('alice');
    expect(tenantKey('alice')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('a batch closes before it outgrows a frame; each frame stays within the limit', () => {
    const max = 600;
    const w = wire(max);
    const calls = Array.from({ length: 12 }, (_, i) => cmd(i));
    for (const c of calls) w.batcher.add(c);
    const frames = w.frames();
    expect(frames.length).toBeGreaterThan(1);
    for (const f of frames) expect(Buffer.byteLength(JSON.stringify(f))).toBeLessThanOrEqual(max);
    expect(asExecuted(frames)).toEqual(calls.map((c) => JSON.parse(executeCallJson(c)) as Frame));
  });

  it('fills a frame near its limit (the size bound is made exact there), multi-byte text included', () => {
    for (const text of ['a', 'é', '😀']) {
      const max = 4000;
      const w = wire(max);
      const calls = Array.from({ length: 60 }, (_, i) => cmd(i, { args: [text.repeat(40)] }));
      for (const c of calls) w.batcher.add(c);
      const frames = w.frames();
      const sizes = frames.map((f) => Buffer.byteLength(JSON.stringify(f)));
      for (const size of sizes) expect(size).toBeLessThanOrEqual(max);
      // Every frame but the last was closed by the next entry not fitting: well past half the limit.
      for (const size of sizes.slice(0, -1)) expect(size, text).toBeGreaterThan(max * 0.75);
      expect(asExecuted(frames)).toEqual(calls.map((c) => JSON.parse(executeCallJson(c)) as Frame));
    }
  });

  it('asks for the successes in bulk on every frame when told to (bulkResults)', () => {
    const w = wire(600, true);
    for (let i = 0; i < 12; i++) w.batcher.add(cmd(i, i === 6 ? { taskId: 't2' } : {}));
    const frames = w.frames();
    expect(frames.length).toBeGreaterThan(2);
    for (const f of frames) expect(f.bulkResults).toBe(true);
    expect(wire().frames()).toEqual([]);
    const plain = wire();
    plain.batcher.add(cmd(0));
    expect(plain.frames()[0]).not.toHaveProperty('bulkResults');
  });

  it('an attempt too large for any frame throws, and nothing of it is queued', () => {
    const w = wire(400);
    w.batcher.add(cmd(0));
    expect(() => w.batcher.add(cmd(1, { args: ['x'.repeat(500)] }))).toThrow(FrameTooLargeError);
    expect(() => w.batcher.add(cmd(2, { args: [1n] }))).toThrow(TypeError);
    w.batcher.add(cmd(3));
    expect(asExecuted(w.frames()).map((f) => f.callId)).toEqual(['t1/0', 't1/3']);
  });

  it('the executor reads the same attempts, in order, around the other frames (property)', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('call' as const),
        task: fc.constantFrom('t1', 't2'),
        block: fc.constantFrom(BLOCK, undefined, { number: 8 }, { number: 7, hash: '0xab' }, { number: 8 }),
        budgetMs: fc.constantFrom(5000, 100),
        args: fc.array(fc.jsonValue(), { maxLength: 3 }),
      }),
      fc.constant({ kind: 'other' as const }),
      fc.constant({ kind: 'flush' as const }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const w = wire(2048);
        const expected: Frame[] = [];
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'call') {
            const c = cmd(n++, { taskId: o.task, block: o.block, budgetMs: o.budgetMs, args: o.args });
            try {
              w.batcher.add(c);
              expected.push(JSON.parse(executeCallJson(c)) as Frame);
            } catch (err) {
              expect(err).toBeInstanceOf(FrameTooLargeError); // too large for any frame: never sent
            }
          } else if (o.kind === 'other') {
            // What ExecutorLink does before any other frame to the connection.
            w.batcher.close();
            const f = { type: 'CancelCall', callId: `t1/${n}`, attempt: 1 };
            w.writer.send(f);
            expected.push(f);
          } else {
            w.writer.flush();
          }
        }
        expect(asExecuted(w.frames())).toEqual(expected);
      }),
    );
  });

  describe('arguments as bytes (ArgsBytes)', () => {
    const row = { idx: 1, s: 'q"uote\\ é \u2028 😀', j: [1, { a: null }] };

    it('go in the attachment to an executor that announced ArgsBytes; the executor runs the same call', () => {
      const w = wire(undefined, false, true, false, true);
      w.batcher.add(cmd(0, { args: bytesArgs(row, ['x', 2]) }));
      w.batcher.add(cmd(1, { args: [row] }));
      w.batcher.add(cmd(2, { args: bytesArgs({ n: 2 }) }));
      const frames = w.frames();
      expect(frames).toHaveLength(1);
      const entries = frames[0]!.calls as Record<string, unknown>[];
      expect(entries.map((e) => Object.keys(e).find((k) => k.startsWith('args')))).toEqual([
        'argsAt',
        'args',
        'argsAt',
      ]);
      expect(asExecuted(frames)).toEqual(
        [cmd(0, { args: [row, 'x', 2] }), cmd(1, { args: [row] }), cmd(2, { args: [{ n: 2 }] })].map(
          (c) => JSON.parse(executeCallJson(c)) as Frame,
        ),
      );
    });

    it('go as text to an executor that did not (their literal made from the bytes)', () => {
      const w = wire(undefined, false, true);
      w.batcher.add(cmd(0, { args: bytesArgs(row, ['x']) }));
      const frames = w.frames();
      expect(attachments.has(frames[0]!)).toBe(false);
      expect(JSON.parse((frames[0]!.calls as { argsJson: string }[])[0]!.argsJson)).toEqual([row, 'x']);
    });

    it("a page of them is their byte pieces joined, not copied; its literal is the page's text", () => {
      const list = [bytesArgs({ a: 1 }, [7]), bytesArgs({ b: 'é' }, [7])];
      const page = encodedArgsList(list);
      expect(page.bytes).toBeDefined();
      expect(page.bytes!.filter((p) => p.length > 1)).toEqual(
        list.flatMap((a) => a.bytes!.filter((p) => p.length > 1)),
      );
      expect(JSON.parse(JSON.parse(page.literal) as string)).toEqual([
        [{ a: 1 }, 7],
        [{ b: 'é' }, 7],
      ]);
      // Mixed with text arguments: the page is text.
      const mixed = encodedArgsList([list[0]!, encodedRowArgs([])(encodeRow({ c: 3 }))]);
      expect(mixed.bytes).toBeUndefined();
      expect(JSON.parse(JSON.parse(mixed.literal) as string)).toEqual([[{ a: 1 }, 7], [{ c: 3 }]]);
    });

    it('the attachment counts toward the frame limit: each frame stays within it', () => {
      const max = 2000;
      const w = wire(max, false, true, false, true);
      const calls = Array.from({ length: 20 }, (_, i) =>
        cmd(i, { args: bytesArgs({ i, pad: 'p'.repeat(200) }) }),
      );
      for (const c of calls) w.batcher.add(c);
      const frames = w.frames();
      expect(frames.length).toBeGreaterThan(2);
      for (const f of frames)
        expect(Buffer.byteLength(JSON.stringify(f)) + 4 + attachments.get(f)!.length).toBeLessThanOrEqual(
          max,
        );
      expect(asExecuted(frames).map((f) => (f.args as [{ i: number }])[0].i)).toEqual(calls.map((_, i) => i));
    });

    it('bytes go as they are: the frame stays well formed whatever they hold (the thread judges them)', () => {
      const bad = encodedRowArgs([])(new BytesRow(Uint8Array.of(0x7b, 0xff, 0x22), {}));
      const w = wire(undefined, false, true, false, true);
      w.batcher.add(cmd(0, { args: bad }));
      w.batcher.add(cmd(1, { args: bytesArgs({ ok: true }) }));
      const [frame] = w.frames();
      const [first, second] = frame!.calls as { argsAt: [number, number] }[];
      const at = attachments.get(frame!)!;
      expect([...at.subarray(first!.argsAt[0], first!.argsAt[0] + first!.argsAt[1])]).toEqual([
        0x5b, 0x7b, 0xff, 0x22, 0x5d,
      ]);
      expect(JSON.parse(Buffer.from(at.subarray(second!.argsAt[0])).toString())).toEqual([{ ok: true }]);
    });
  });

  describe('encoded arguments (rows as JSON text)', () => {
    const row = { idx: 1, s: 'q"uote\\ é \u2028', j: [1, { a: null }] };
    const encoded = encodedRowArgs(['x', 2])(encodeRow(row));

    it.each([
      { name: 'to an executor that takes ArgsJson, as the text itself (argsJson)', argsJson: true },
      { name: 'to any other, as the values (args)', argsJson: false },
    ])('$name; the executor runs the same call', ({ argsJson }) => {
      const w = wire(undefined, false, argsJson);
      w.batcher.add(cmd(0, { args: encoded }));
      const [frame] = w.frames();
      const entry = (frame?.calls as Record<string, unknown>[])[0]!;
      if (argsJson) {
        expect(entry).not.toHaveProperty('args');
        expect(JSON.parse(entry.argsJson as string)).toEqual([row, 'x', 2]);
      } else {
        expect(entry).not.toHaveProperty('argsJson');
        expect(entry.args).toEqual([row, 'x', 2]);
      }
      expect(asExecuted([frame!])).toEqual([JSON.parse(executeCallJson(cmd(0, { args: [row, 'x', 2] })))]);
    });

    it('arguments encoded elsewhere are checked before they are sent: not the JSON of an array never leaves', () => {
      for (const argsJson of [true, false]) {
        const w = wire(undefined, false, argsJson);
        for (const bad of [encodedArgsText('{"a":1}'), encodedArgsText('[1] 2'), { literal: '"[1]' }])
          expect(() => w.batcher.add(cmd(0, { args: bad }))).toThrow();
        w.batcher.add(cmd(1, { args: encodedArgsText('[1,"two"]') }));
        expect(asExecuted(w.frames())).toEqual([JSON.parse(executeCallJson(cmd(1, { args: [1, 'two'] })))]);
      }
    });

    it('a single ExecuteCall frame carries encoded arguments as their values', () => {
      expect(JSON.parse(executeCallJson(cmd(0, { args: encoded })))).toEqual(
        JSON.parse(executeCallJson(cmd(0, { args: [row, 'x', 2] }))),
      );
    });
  });
});

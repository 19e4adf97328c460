import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameInvalidError, FrameTooLargeError } from '../../../src/executor/errors.js';
import {
  callsCompletedFrames,
  completedResultJson,
  completedResultsOf,
  encodeFrame,
  encodeJsonFrame,
  FrameDecoder,
  FrameWriter,
  parseMessage,
} from '../../../src/executor/frame-codec.js';

/** Cut `buf` at the given offsets (any order, duplicates and out-of-range values allowed). */
function split(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, buf.length]) {
    chunks.push(buf.subarray(prev, p));
    prev = p;
  }
  return chunks;
}

const message = fc.record({
  type: fc.string({ minLength: 1, maxLength: 12 }),
  callId: fc.string({ unit: 'grapheme', maxLength: 20 }),
  attempt: fc.integer({ min: 1, max: 10 }),
  value: fc.jsonValue({ maxDepth: 3 }),
});

describe('frame codec', () => {
  it('decodes any message sequence identically, however the byte stream is chunked', () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (msgs, cuts) => {
          const stream = Buffer.concat(msgs.map((m) => encodeFrame(m)));
          const decoder = new FrameDecoder();
          const out = split(stream, cuts).flatMap((chunk) => decoder.push(chunk));
          expect(out).toEqual(msgs.map((m) => JSON.parse(JSON.stringify(m))));
          expect(decoder.pendingBytes).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('handles a header split byte by byte and multi-byte UTF-8 split mid-character', () => {
    const msg = { type: 'CallCompleted', value: 'héllo → 世界 🚀' };
    const frame = encodeFrame(msg);
    const decoder = new FrameDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < frame.length; i++) out.push(...decoder.push(frame.subarray(i, i + 1)));
    expect(out).toEqual([msg]);
  });

  it('returns every frame of a coalesced chunk, keeping a trailing partial frame', () => {
    const a = encodeFrame({ type: 'A' });
    const b = encodeFrame({ type: 'B' });
    const c = encodeFrame({ type: 'C', pad: 'x'.repeat(100) });
    const decoder = new FrameDecoder();
    expect(decoder.push(Buffer.concat([a, b, c.subarray(0, 10)]))).toEqual([{ type: 'A' }, { type: 'B' }]);
    expect(decoder.pendingBytes).toBe(10);
    expect(decoder.push(c.subarray(10))).toEqual([{ type: 'C', pad: 'x'.repeat(100) }]);
  });

  it('refuses a declared length above the maximum before buffering the payload', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 64 });
    const header = Buffer.alloc(4);
    header.writeUInt32BE(65, 0);
    let caught: unknown;
    try {
      decoder.push(header);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(FrameTooLargeError);
    expect(caught).toMatchObject({ code: 'FRAME_TOO_LARGE', bytes: 65, maxBytes: 64 });
    expect((caught as Error).message).toContain('received a frame of 65 bytes; the maximum is 64 bytes');
  });

  it('accepts a frame of exactly the maximum size', () => {
    const json = JSON.stringify({ type: 'x', pad: '' });
    const max = json.length + 10;
    const exact = JSON.stringify({ type: 'x', pad: 'y'.repeat(10) });
    expect(Buffer.byteLength(exact)).toBe(max);
    expect(new FrameDecoder({ maxFrameBytes: max }).push(encodeJsonFrame(exact, max))).toHaveLength(1);
    expect(() => encodeJsonFrame(`${exact} `, max)).toThrow(FrameTooLargeError);
  });

  it('rejects payloads that are not JSON objects with a string type', () => {
    expect(() => parseMessage('{nope')).toThrow(FrameInvalidError);
    expect(() => parseMessage('[1,2]')).toThrow(/not a JSON object/);
    expect(() => parseMessage('null')).toThrow(/not a JSON object/);
    expect(() => parseMessage('{"type":3}')).toThrow(/no string "type"/);
    expect(() => new FrameDecoder().push(encodeJsonFrame('"text"'))).toThrow(FrameInvalidError);
  });

  it('pushRaw returns the payload text unparsed', () => {
    const decoder = new FrameDecoder();
    expect(decoder.pushRaw(encodeJsonFrame('{"type":"A","n":1}'))).toEqual(['{"type":"A","n":1}']);
  });
});

describe('frame writer', () => {
  function sink() {
    const writes: Buffer[] = [];
    return { writes, write: (b: Buffer) => (writes.push(Buffer.from(b)), true) };
  }

  it('joins the frames of one turn into a single write', async () => {
    const s = sink();
    const writer = new FrameWriter(s);
    for (let i = 0; i < 100; i++) writer.send({ type: 'T', i });
    expect(s.writes).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(s.writes).toHaveLength(1);
    const decoded = new FrameDecoder().push(s.writes[0]!);
    expect(decoded).toHaveLength(100);
    expect(decoded[99]).toEqual({ type: 'T', i: 99 });
  });

  it('throws synchronously for an oversized frame and still writes the rest', () => {
    const s = sink();
    const writer = new FrameWriter(s, { maxFrameBytes: 32 });
    writer.send({ type: 'ok' });
    expect(() => writer.send({ type: 'big', pad: 'z'.repeat(64) })).toThrow(FrameTooLargeError);
    writer.sendJson('{"type":"raw"}');
    writer.flush();
    expect(new FrameDecoder().push(s.writes[0]!)).toEqual([{ type: 'ok' }, { type: 'raw' }]);
  });

  it('drops queued frames and ignores new ones after close', async () => {
    const s = sink();
    const writer = new FrameWriter(s);
    writer.send({ type: 'lost' });
    writer.close();
    writer.send({ type: 'ignored' });
    writer.flush();
    await new Promise((r) => setImmediate(r));
    expect(s.writes).toHaveLength(0);
  });
});

describe('CallsCompleted codec (docs/executor.md § Calls in bulk)', () => {
  const result = fc.record(
    {
      callId: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
      attempt: fc.integer({ min: 1, max: 9 }),
      value: fc.jsonValue({ maxDepth: 2 }),
      durationMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
      ioHits: fc.integer({ min: 0, max: 5 }),
    },
    { requiredKeys: ['callId', 'attempt', 'durationMs'] },
  );
  const asJson = (r: {
    callId: string;
    attempt: number;
    value?: unknown;
    durationMs: number;
    ioHits?: number;
  }) => completedResultJson(r.callId, r.attempt, r.value, r.durationMs, r.ioHits ?? 0);

  it('carries every entry once, in order, in frames under the limit; one that fits no CallsCompleted goes as its CallCompleted', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 10 }),
        fc.array(result, { maxLength: 25 }),
        fc.integer({ min: 60, max: 2_000 }),
        (taskId, results, maxBytes) => {
          const entries = results.map(asJson);
          const frames = callsCompletedFrames(taskId, entries, maxBytes);
          const carried: unknown[] = [];
          for (const f of frames) {
            const m = parseMessage<Record<string, unknown>>(f);
            if (m.type === 'CallsCompleted') {
              expect(Buffer.byteLength(f)).toBeLessThanOrEqual(maxBytes);
              expect(m.taskId).toBe(taskId);
              const rs = m.results as unknown[];
              expect(rs.length).toBeGreaterThan(0);
              expect(completedResultsOf(m as never, () => expect.unreachable())).toEqual(rs);
              carried.push(...rs);
            } else {
              expect(m.type).toBe('CallCompleted');
              const { type: _t, ...rest } = m;
              // it would not fit a CallsCompleted frame of its own
              const alone = callsCompletedFrames(taskId, [JSON.stringify(rest)], Infinity)[0]!;
              expect(Buffer.byteLength(alone)).toBeGreaterThan(maxBytes);
              carried.push(rest);
            }
          }
          expect(carried).toEqual(entries.map((e) => JSON.parse(e)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('sends one frame for the entries of a turn when they fit', () => {
    const entries = [
      asJson({ callId: 'a', attempt: 1, value: 1, durationMs: 0.5 }),
      asJson({ callId: 'b', attempt: 2, durationMs: 1, ioHits: 3 }),
    ];
    expect(callsCompletedFrames('t-1', entries, 1024)).toEqual([
      '{"type":"CallsCompleted","taskId":"t-1","results":[{"callId":"a","attempt":1,"value":1,"durationMs":0.5},{"callId":"b","attempt":2,"durationMs":1,"ioHits":3}]}',
    ]);
    expect(callsCompletedFrames('t-1', [], 1024)).toEqual([]);
  });

  it.each([
    [{ taskId: 1, results: [] }, 'taskId must be a string'],
    [{ taskId: 't', results: {} }, 'results must be an array'],
  ])('drops a whole frame with a bad task-level field: %j', (frame, problem) => {
    const problems: string[] = [];
    expect(
      completedResultsOf({ type: 'CallsCompleted', ...frame } as never, (p) => problems.push(p)),
    ).toEqual([]);
    expect(problems).toEqual([problem]);
  });

  it('drops only a malformed entry', () => {
    const ok = { callId: 'ok', attempt: 1, value: null, durationMs: 2 };
    const bad: [unknown, string][] = [
      [null, 'a result must be an object'],
      [[1], 'a result must be an object'],
      [{ callId: '', attempt: 1, durationMs: 0 }, 'callId must be a non-empty string'],
      [{ callId: 'x', attempt: 0, durationMs: 0 }, 'attempt must be a positive integer'],
      [{ callId: 'x', attempt: 1.5, durationMs: 0 }, 'attempt must be a positive integer'],
      [{ callId: 'x', attempt: 1 }, 'durationMs must be a finite number >= 0'],
      [{ callId: 'x', attempt: 1, durationMs: -1 }, 'durationMs must be a finite number >= 0'],
      [
        { callId: 'x', attempt: 1, durationMs: 0, ioHits: 0.5 },
        'ioHits must be a whole number >= 0 when present',
      ],
    ];
    const problems: string[] = [];
    const m = { type: 'CallsCompleted', taskId: 't', results: [...bad.map(([e]) => e), ok] } as const;
    expect(completedResultsOf(m as never, (p) => problems.push(p))).toEqual([ok]);
    expect(problems).toEqual(bad.map(([, p]) => p));
  });

  it('throws for a value that is not JSON, as CallCompleted serialisation does', () => {
    expect(() => completedResultJson('c', 1, 10n, 0, 0)).toThrow(TypeError);
  });
});

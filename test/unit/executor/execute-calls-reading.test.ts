// How the executor reads an ExecuteCalls frame (src/executor/executor-main.ts, batchOf): the task-level
// fields once, each entry with `args` or, from a Worker that saw ArgsJson announced, `argsJson`, or from
// one that saw ArgsBytes, `argsAt` pointing into the frame's attachment.
import { describe, expect, it } from 'vitest';
import { batchOf, executeCallsOf } from '../../../src/executor/executor-main.js';
import type { ExecuteCallsMessage } from '../../../src/executor/protocol.js';

const frame = (calls: unknown[], over: Record<string, unknown> = {}): ExecuteCallsMessage =>
  ({
    type: 'ExecuteCalls',
    taskId: 't',
    function: 'f',
    codeEpoch: 'e',
    budgetMs: 100,
    bulkResults: true,
    calls,
    ...over,
  }) as ExecuteCallsMessage;

describe('reading an ExecuteCalls frame', () => {
  it.each([
    [{ callId: 'a', attempt: 1, args: [1] }, undefined],
    [{ callId: 'a', attempt: 1, argsJson: '[1]' }, undefined],
    [
      { callId: 'a', attempt: 1, args: [1], argsJson: '[1]' },
      'an entry carries one of args, argsJson and argsAt',
    ],
    [{ callId: 'a', attempt: 1, argsAt: [0, 3] }, 'argsAt needs a frame with an attachment'],
    [{ callId: 'a', attempt: 1, argsJson: 7 }, 'argsJson must be a string'],
    [{ callId: 'a', attempt: 1 }, 'args must be an array'],
    [{ callId: '', attempt: 1, args: [] }, 'callId must be a non-empty string'],
  ])('entry %j: %s', (entry, problem) => {
    const problems: string[] = [];
    const batch = batchOf(frame([entry]), (p) => problems.push(p));
    expect(problems).toEqual(problem === undefined ? [] : [problem]);
    expect(batch?.calls).toEqual(problem === undefined ? [entry] : []);
  });

  const attachment = new TextEncoder().encode('[1][{"x":2}]');
  it.each([
    [[0, 3], undefined],
    [[3, 9], undefined],
    [[0, 0], undefined],
    [[3, 10], 'argsAt [3, 10] overruns the attachment of 12 bytes'],
    [[-1, 2], 'argsAt must be [offset, length], two integers >= 0'],
    [[0.5, 2], 'argsAt must be [offset, length], two integers >= 0'],
    [[0], 'argsAt must be [offset, length], two integers >= 0'],
    ['0,3', 'argsAt must be [offset, length], two integers >= 0'],
  ])('argsAt %j in an attachment of 12 bytes: %s', (at, problem) => {
    const problems: string[] = [];
    const batch = batchOf(
      frame([{ callId: 'a', attempt: 1, argsAt: at }]),
      (p) => problems.push(p),
      attachment,
    );
    expect(problems).toEqual(problem === undefined ? [] : [problem]);
    if (problem !== undefined) return expect(batch?.calls).toEqual([]);
    const [offset, length] = at as [number, number];
    const call = batch!.calls[0] as { argsBytes: Uint8Array; argsAt?: unknown };
    expect(call.argsAt).toBeUndefined();
    expect([...call.argsBytes]).toEqual([...attachment.subarray(offset, offset + length)]);
    // Its own copy: the thread gets these bytes, not the frame's buffer.
    expect(call.argsBytes.buffer).not.toBe(attachment.buffer);
    expect(call.argsBytes.byteLength).toBe(call.argsBytes.buffer.byteLength);
  });

  it('spells an argsAt entry out as the ExecuteCall it stands for', () => {
    const calls = executeCallsOf(
      frame([{ callId: 'a', attempt: 2, argsAt: [3, 9] }]),
      () => undefined,
      attachment,
    );
    expect(calls.map((c) => c.args)).toEqual([[{ x: 2 }]]);
  });

  it('keeps the task-level fields once, bulkResults included, and drops the frame for a bad one', () => {
    const batch = batchOf(frame([{ callId: 'a', attempt: 1, args: [] }]), () => expect.unreachable());
    expect(batch?.task).toEqual({
      taskId: 't',
      function: 'f',
      codeEpoch: 'e',
      budgetMs: 100,
      bulkResults: true,
    });
    const problems: string[] = [];
    expect(batchOf(frame([], { budgetMs: -1 }), (p) => problems.push(p))).toBeUndefined();
    expect(problems).toEqual(['budgetMs must be a number >= 0']);
  });

  it('spells an argsJson entry out as the ExecuteCall it stands for', () => {
    expect(
      executeCallsOf(frame([{ callId: 'a', attempt: 2, argsJson: '[{"x":1}]' }]), () => undefined),
    ).toEqual([
      {
        type: 'ExecuteCall',
        taskId: 't',
        function: 'f',
        codeEpoch: 'e',
        budgetMs: 100,
        callId: 'a',
        attempt: 2,
        args: [{ x: 1 }],
      },
    ]);
  });
});

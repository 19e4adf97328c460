// How the executor reads an ExecuteCalls frame (src/executor/executor-main.ts, batchOf): the task-level
// fields once, each entry with `args` or, from a Worker that saw ArgsJson announced, `argsJson`.
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
    [{ callId: 'a', attempt: 1, args: [1], argsJson: '[1]' }, 'an entry carries args or argsJson, not both'],
    [{ callId: 'a', attempt: 1, argsJson: 7 }, 'argsJson must be a string'],
    [{ callId: 'a', attempt: 1 }, 'args must be an array'],
    [{ callId: '', attempt: 1, args: [] }, 'callId must be a non-empty string'],
  ])('entry %j: %s', (entry, problem) => {
    const problems: string[] = [];
    const batch = batchOf(frame([entry]), (p) => problems.push(p));
    expect(problems).toEqual(problem === undefined ? [] : [problem]);
    expect(batch?.calls).toEqual(problem === undefined ? [entry] : []);
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

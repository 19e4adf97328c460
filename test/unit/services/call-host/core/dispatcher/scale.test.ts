// Scale: 100,000 calls of one task (and 100 tasks of 1,000) go through the core with a synchronous fake
// executor and every output arrives, in call-list order, reported one by one or in bulk (callsCompleted). Speed is measured in bench/, not here (an O(n)
// step per event would make this file take minutes, which the suite's timeout then reports).
import { describe, expect, it } from 'vitest';
import type { DispatcherCommand } from '../../../../../../src/services/call-host/core/dispatcher/commands.js';
import { coreWith } from './harness.js';

function drive(tasks: number, callsPerTask: number, bulk: number): { outputs: number; ordered: boolean } {
  const core = coreWith();
  const queue: { callId: string; attempt: number }[] = [];
  let outputs = 0;
  let ordered = true;
  const take = (cmds: readonly DispatcherCommand[]): void => {
    for (const c of cmds) {
      if (c.type === 'ExecuteCalls') for (const a of c.attempts) queue.push(a);
      else if (c.type === 'ConvergeTaskCalls' && c.success) {
        outputs += c.outputs.length;
        ordered &&= c.outputs.every((v, i) => (v as { index: number }).index === i);
      }
    }
  };
  for (let t = 0; t < tasks; t++) {
    const calls = Array.from({ length: callsPerTask }, (_, i) => ({ function: 'noop', args: [i] }));
    take(core.startCallPhase(`task-${t}`, calls, { deadlineMs: 1e12, fastFail: true }, 0));
  }
  let now = 0;
  const indexOf = (callId: string) => ({ index: Number(callId.slice(callId.lastIndexOf('/') + 1)) });
  for (let head = 0; head < queue.length;) {
    now += 0.01;
    if (bulk > 1) {
      const batch = queue.slice(head, head + bulk);
      head += batch.length;
      take(
        core.callsCompleted(
          batch.map(({ callId, attempt }) => ({ callId, attempt, value: indexOf(callId) })),
          8,
          now,
        ),
      );
    } else {
      const { callId, attempt } = queue[head++]!;
      core.callStarted(callId, attempt, now);
      take(core.callCompleted(callId, attempt, indexOf(callId), 8, now));
    }
    if ((head & 63) === 0) take(core.tick(now));
  }
  return { outputs, ordered };
}

describe('scale', () => {
  it.each([
    { tasks: 1, callsPerTask: 100_000, bulk: 1 },
    { tasks: 100, callsPerTask: 1_000, bulk: 1 },
    { tasks: 1, callsPerTask: 100_000, bulk: 64 },
    { tasks: 100, callsPerTask: 1_000, bulk: 37 },
  ])(
    '$tasks task(s) × $callsPerTask calls (bulk $bulk) all converge with ordered outputs',
    ({ tasks, callsPerTask, bulk }) => {
      const { outputs, ordered } = drive(tasks, callsPerTask, bulk);
      expect(outputs).toBe(tasks * callsPerTask);
      expect(ordered).toBe(true);
    },
  );
});

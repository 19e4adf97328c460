// Scale: 100,000 calls of one task (and 100 tasks of 1,000) go through the core with a synchronous fake
// executor and every output arrives, in call-list order. Speed is measured in bench/, not here (an O(n)
// step per event would make this file take minutes, which the suite's timeout then reports).
import { describe, expect, it } from 'vitest';
import type { DispatcherCommand } from '../../../../../../src/services/call-host/core/dispatcher/commands.js';
import { coreWith } from './harness.js';

function drive(tasks: number, callsPerTask: number): { outputs: number; ordered: boolean } {
  const core = coreWith();
  const queue: { callId: string; attempt: number }[] = [];
  let outputs = 0;
  let ordered = true;
  const take = (cmds: readonly DispatcherCommand[]): void => {
    for (const c of cmds) {
      if (c.type === 'ExecuteCall') queue.push({ callId: c.callId, attempt: c.attempt });
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
  for (let head = 0; head < queue.length; head++) {
    const { callId, attempt } = queue[head]!;
    now += 0.01;
    core.callStarted(callId, attempt, now);
    take(
      core.callCompleted(
        callId,
        attempt,
        { index: Number(callId.slice(callId.lastIndexOf('/') + 1)) },
        8,
        now,
      ),
    );
    if ((head & 63) === 0) take(core.tick(now));
  }
  return { outputs, ordered };
}

describe('scale', () => {
  it.each([
    { tasks: 1, callsPerTask: 100_000 },
    { tasks: 100, callsPerTask: 1_000 },
  ])('$tasks task(s) × $callsPerTask calls all converge with ordered outputs', ({ tasks, callsPerTask }) => {
    const { outputs, ordered } = drive(tasks, callsPerTask);
    expect(outputs).toBe(tasks * callsPerTask);
    expect(ordered).toBe(true);
  });
});

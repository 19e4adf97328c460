// Pages on the real executor process (docs/executor.md § Pages): one attempt runs many calls of a
// function, each with its own arguments, call id and block, and answers the list of their values; a call
// that throws or asks for a subcall fails the page (the Worker's dispatcher then splits it).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodedArgsList, encodedArgsText } from '../../../src/contracts/call-args.js';
import { FunctionCodeView } from '../../../src/executor/code-epochs.js';
import type { CallPageInfo } from '../../../src/executor/protocol.js';
import { ExecutorHarness, FIXTURE_FUNCTIONS } from './executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const fixtures = new FunctionCodeView({ dir: FIXTURE_FUNCTIONS });
let h: ExecutorHarness;
let epoch: string;

beforeAll(async () => {
  epoch = await fixtures.pinCurrent();
  h = await new ExecutorHarness({ functionsDir: FIXTURE_FUNCTIONS }).start();
});

afterAll(async () => {
  await h?.stop();
});

/** A page of `fn` over these argument lists (each call's arguments as encoded text). */
function page(fn: string, rows: unknown[][], info: CallPageInfo, callId = `task-p/${info.first}-x`) {
  return h.run({
    taskId: 'task-p',
    callId,
    function: fn,
    codeEpoch: epoch,
    args: encodedArgsList(rows.map((r) => encodedArgsText(JSON.stringify(r)))),
    page: info,
  });
}

describe('a page on the executor', () => {
  it('runs each call with its own arguments, call id and block, and answers their values in order', async () => {
    const r = await page('echo', [[1], ['two'], [{ three: 3 }, 4]], {
      first: 10,
      blocks: [
        [2, { chain_id: 1, number: 7, hash: '0x07' }],
        [1, null],
      ],
    });
    expect(r).toMatchObject({
      type: 'callCompleted',
      value: [
        { args: [1], taskId: 'task-p', callId: 'task-p/10', attempt: 1, block: { number: 7, hash: '0x07' } },
        { args: ['two'], callId: 'task-p/11', block: { number: 7 } },
        { args: [{ three: 3 }, 4], callId: 'task-p/12', block: null },
      ],
    });
  });

  it('fails when a call throws', async () => {
    const r = await page('fails', [['plain'], ['plain']], { first: 0, blocks: [[2, null]] });
    expect(r).toMatchObject({ type: 'callFailed', kind: 'user', message: expect.stringContaining('boom') });
  });

  it('fails when a call asks for a subcall, whatever the function does with the refusal', async () => {
    const r = await page('parent', [[1], [2]], { first: 0, blocks: [[2, null]] });
    expect(r).toMatchObject({
      type: 'callFailed',
      message: expect.stringContaining('subcalls run outside pages'),
    });
  });

  it('stops starting calls once half its budget has passed, and answers the values of those it started', async () => {
    // Each call holds the thread 60 ms; the budget is 200 ms, so a third call would start past 100 ms.
    const r = await h.run({
      taskId: 'task-p',
      callId: 'task-p/0-4',
      function: 'busy',
      codeEpoch: epoch,
      budgetMs: 200,
      args: encodedArgsList([0, 1, 2, 3, 4].map(() => encodedArgsText('[60]'))),
      page: { first: 0, blocks: [[5, null]] },
    });
    expect(r.type).toBe('callCompleted');
    const values = (r as { value: unknown[] }).value;
    expect(values.length).toBeGreaterThanOrEqual(1);
    expect(values.length).toBeLessThanOrEqual(2);
    expect(new Set(values)).toEqual(new Set([60]));
  });

  it('refuses a page whose block runs do not count its calls', async () => {
    const r = await page('echo', [[1], [2], [3]], { first: 0, blocks: [[5, null]] });
    expect(r).toMatchObject({
      type: 'callFailed',
      retryable: false,
      message: expect.stringContaining('a page of 3 calls has blocks for 5'),
    });
  });
});

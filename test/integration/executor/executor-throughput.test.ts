// Volume through the real path: ExecutorLink → executor process → ExecutorLink, 1,024 calls in flight.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FunctionCodeView } from '../../../src/executor/code-epochs.js';
import { ExecutorHarness, FIXTURE_FUNCTIONS, type Terminal } from './executor-harness.js';

// Real executor processes started from src/ under tsx: the bounds these tests had in the process tier.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const view = new FunctionCodeView({ dir: FIXTURE_FUNCTIONS });
let h: ExecutorHarness;
let epoch: string;

beforeAll(async () => {
  epoch = await view.pinCurrent();
  h = await new ExecutorHarness({ functionsDir: FIXTURE_FUNCTIONS, epochs: view }).start();
});
afterAll(() => h?.stop());

/** Run `total` no-op calls keeping `window` in flight; resolves with the terminal events and calls/s. */
async function drive(
  total: number,
  window: number,
  prefix: string,
): Promise<{ results: Terminal[]; rate: number }> {
  const results: Terminal[] = [];
  let next = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const launch = () => {
      const i = next++;
      void h.run({ function: 'noop', codeEpoch: epoch, callId: `${prefix}${i}` }).then((r) => {
        results.push(r);
        if (next < total) launch();
        else if (results.length === total) resolve();
      });
    };
    for (let i = 0; i < Math.min(window, total); i++) launch();
  });
  return { results, rate: (total / (performance.now() - start)) * 1000 };
}

describe('executor throughput', () => {
  it('completes 10,000 no-op calls with 1,024 in flight', async () => {
    await drive(2_000, 1_024, 'warm-'); // load the module on both threads first
    const { results, rate } = await drive(10_000, 1_024, 'n-');
    expect(results).toHaveLength(10_000);
    expect(results.every((r) => r.type === 'callCompleted' && r.value === null)).toBe(true);
    expect(new Set(results.map((r) => r.callId)).size).toBe(10_000);
    expect(h.link.inflight).toBe(0);
    console.log(`executor link path: ${Math.round(rate)} no-op calls/s with 1,024 in flight`);
  });
});

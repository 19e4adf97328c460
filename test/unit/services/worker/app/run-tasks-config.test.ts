// The RunTasks knobs (docs/batched-protocol.md § Worker): `worker.runTasks.maxInFlight` (default: the
// worker's taskSlots) and `worker.runTasks.flushMs` (default 2), from the file or the environment.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../../../src/kernel/config.js';
import { parseConfigText } from '../../../../../src/kernel/config-source.js';
import { ConfigError } from '../../../../../src/kernel/errors.js';

const FILE = '/tmp/bx/blockx.config.yaml';
const load = (worker: string, env: Record<string, string> = {}) =>
  resolveConfig(parseConfigText(`version: 1\ndeployments:\n  block:\n    kind: block\n${worker}`, FILE), {
    deployments: ['block'],
    env,
  }).deployments.block!.worker;

describe('worker.runTasks', () => {
  it('defaults: maxInFlight unset (the taskSlots apply), flushMs 2', () => {
    const w = load('');
    expect(w.runTasks).toEqual({ flushMs: 2 });
    expect(w.runTasks.maxInFlight ?? w.taskSlots).toBe(64);
  });

  it('takes both from the file', () => {
    const w = load('    worker:\n      runTasks:\n        maxInFlight: 16\n        flushMs: 0\n');
    expect(w.runTasks).toEqual({ maxInFlight: 16, flushMs: 0 });
  });

  it('takes WORKER_RUN_TASKS_MAX_IN_FLIGHT and WORKER_RUN_TASKS_FLUSH_MS over the file', () => {
    const w = load('    worker:\n      runTasks:\n        maxInFlight: 16\n', {
      WORKER_RUN_TASKS_MAX_IN_FLIGHT: '1024',
      WORKER_RUN_TASKS_FLUSH_MS: '5',
    });
    expect(w.runTasks).toEqual({ maxInFlight: 1024, flushMs: 5 });
  });

  it.each([
    ['maxInFlight 0 in the file', '    worker:\n      runTasks:\n        maxInFlight: 0\n', {}],
    ['a negative flushMs in the file', '    worker:\n      runTasks:\n        flushMs: -1\n', {}],
    ['an unknown runTasks key', '    worker:\n      runTasks:\n        window: 3\n', {}],
    ['WORKER_RUN_TASKS_MAX_IN_FLIGHT=0', '', { WORKER_RUN_TASKS_MAX_IN_FLIGHT: '0' }],
    ['WORKER_RUN_TASKS_FLUSH_MS=soon', '', { WORKER_RUN_TASKS_FLUSH_MS: 'soon' }],
  ])('refuses %s', (_name, worker, env) => {
    expect(() => load(worker, env)).toThrow(ConfigError);
  });
});

// The one service lifecycle: assemble → serviceAssembled → … → stop: unwind → shutdown.
import { describe, expect, it } from 'vitest';
import { startServices } from '../../../src/app/lifecycle.js';
import { createKernelHooks } from '../../../src/kernel/hooks.js';
import type { BlockxConfig } from '../../../src/kernel/config-types.js';
import type { ServicePlan } from '../../../src/kernel/service-plan.js';

const PLAN: ServicePlan = { mode: 'worker', deployment: 'block', services: [] };

function setup() {
  const events: string[] = [];
  const hooks = createKernelHooks<BlockxConfig, ServicePlan>();
  hooks.serviceAssembled.tapPromise('probe', async (plan) => void events.push(`assembled:${plan.mode}`));
  hooks.shutdown.tapPromise('probe', async (reason) => void events.push(`shutdown:${reason}`));
  const errors: string[] = [];
  const logger = {
    error: (obj: Record<string, unknown>, msg: string) => void errors.push(`${msg}:${obj.step}`),
  };
  return { events, hooks, errors, logger };
}

describe('startServices', () => {
  it('assembles, fires serviceAssembled, and on stop unwinds LIFO before shutdown', async () => {
    const { events, hooks, logger } = setup();
    const running = await startServices({
      kernel: { hooks },
      plan: PLAN,
      logger,
      assemble: async (stack) => {
        stack.defer('storage', () => void events.push('stop:storage'));
        stack.defer('worker', () => void events.push('stop:worker'));
        events.push('assemble');
        return 42;
      },
    });
    expect(running.services).toBe(42);
    expect(events).toEqual(['assemble', 'assembled:worker']);
    const first = running.stop('SIGTERM');
    expect(running.stop('SIGINT')).toBe(first);
    expect(await first).toEqual([]);
    expect(events).toEqual([
      'assemble',
      'assembled:worker',
      'stop:worker',
      'stop:storage',
      'shutdown:SIGTERM',
    ]);
  });

  it('a failed assembly unwinds what started and rethrows; no hook fires', async () => {
    const { events, hooks, logger } = setup();
    const err = await startServices({
      kernel: { hooks },
      plan: PLAN,
      logger,
      assemble: async (stack) => {
        stack.defer('storage', () => void events.push('stop:storage'));
        throw new Error('bind failed');
      },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('bind failed');
    expect(events).toEqual(['stop:storage']);
  });

  it('a failing serviceAssembled tap unwinds the services and rethrows the PluginError', async () => {
    const { events, hooks, logger } = setup();
    hooks.serviceAssembled.tapPromise('bad', async () => {
      throw new Error('tap broke');
    });
    const err = await startServices({
      kernel: { hooks },
      plan: PLAN,
      logger,
      assemble: async (stack) => stack.defer('worker', () => void events.push('stop:worker')),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_HOOK_FAILED', plugin: 'bad', hook: 'serviceAssembled' });
    expect(events).toEqual(['assembled:worker', 'stop:worker']);
  });

  it('teardown failures are logged and returned; the other steps and the shutdown hook still run', async () => {
    const { events, hooks, errors, logger } = setup();
    const running = await startServices({
      kernel: { hooks },
      plan: PLAN,
      logger,
      assemble: async (stack) => {
        stack.defer('storage', () => void events.push('stop:storage'));
        stack.defer('executor', () => {
          throw new Error('stuck');
        });
      },
    });
    const failures = await running.stop('SIGINT');
    expect(failures.map((f) => f.step)).toEqual(['executor']);
    expect(errors).toEqual(['stop failed:executor']);
    expect(events).toEqual(['assembled:worker', 'stop:storage', 'shutdown:SIGINT']);
  });
});

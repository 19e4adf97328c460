import { describe, expect, it } from 'vitest';
import { SyncHook } from 'tapable';
import { KernelErrorCode, PluginError } from '../../../src/kernel/errors.js';
import { createKernelHooks, KERNEL_HOOK_NAMES, stagePluginTaps } from '../../../src/kernel/hooks.js';

describe('kernel hook catalogue', () => {
  it('declares exactly the kernel lifecycle hooks', () => {
    const hooks = createKernelHooks();
    expect(Object.keys(hooks).sort()).toEqual([...KERNEL_HOOK_NAMES].sort());
    expect(Object.keys(hooks).sort()).toEqual(
      [
        'configLoaded',
        'pluginsRegistered',
        'registerBuilders',
        'registerWriters',
        'serviceAssembled',
        'shutdown',
      ].sort(),
    );
  });

  it('is frozen: hooks cannot be added, replaced or removed', () => {
    const hooks = createKernelHooks() as unknown as Record<string, unknown>;
    expect(Object.isFrozen(hooks)).toBe(true);
    expect(() => {
      hooks.myHook = new SyncHook(['x']);
    }).toThrow(TypeError);
    expect(() => {
      hooks.shutdown = new SyncHook(['x']);
    }).toThrow(TypeError);
    expect(() => delete hooks.configLoaded).toThrow(TypeError);
    expect('myHook' in hooks).toBe(false);
  });

  it('names each hook and its arguments', () => {
    const hooks = createKernelHooks();
    expect(hooks.configLoaded.name).toBe('configLoaded');
    expect((hooks.serviceAssembled as unknown as { _args: string[] })._args).toEqual(['service']);
    expect((hooks.shutdown as unknown as { _args: string[] })._args).toEqual(['reason']);
  });

  it('runs taps in stage order (then registration order), each receiving the call arguments', () => {
    const hooks = createKernelHooks<{ n: number }>();
    const seen: string[] = [];
    hooks.configLoaded.tap({ name: 'late', stage: 10 }, (c) => seen.push(`late:${c.n}`));
    hooks.configLoaded.tap('first-default', (c) => seen.push(`first-default:${c.n}`));
    hooks.configLoaded.tap({ name: 'early', stage: -10 }, (c) => seen.push(`early:${c.n}`));
    hooks.configLoaded.tap('second-default', (c) => seen.push(`second-default:${c.n}`));
    hooks.configLoaded.call({ n: 7 });
    expect(seen).toEqual(['early:7', 'first-default:7', 'second-default:7', 'late:7']);
  });

  it('awaits async series taps one after the other, in stage order', async () => {
    const hooks = createKernelHooks();
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    hooks.shutdown.tapPromise({ name: 'b', stage: 1 }, async (reason) => {
      seen.push(`b:${reason}`);
    });
    hooks.shutdown.tapPromise('a', async (reason) => {
      seen.push(`a-start:${reason}`);
      await gate;
      seen.push('a-end');
    });
    const done = hooks.shutdown.promise('SIGTERM');
    await Promise.resolve();
    expect(seen).toEqual(['a-start:SIGTERM']);
    release();
    await done;
    expect(seen).toEqual(['a-start:SIGTERM', 'a-end', 'b:SIGTERM']);
  });

  describe('a failing tap surfaces as PLUGIN_HOOK_FAILED naming plugin and hook', () => {
    it('sync tap that throws', () => {
      const hooks = createKernelHooks();
      const cause = new Error('kaput');
      hooks.configLoaded.tap({ name: 'my-plugin', pluginPath: '/plugins/my-plugin' }, () => {
        throw cause;
      });
      let caught: unknown;
      try {
        hooks.configLoaded.call({});
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(PluginError);
      const err = caught as PluginError;
      expect(err.code).toBe(KernelErrorCode.PLUGIN_HOOK_FAILED);
      expect(err.plugin).toBe('my-plugin');
      expect(err.hook).toBe('configLoaded');
      expect(err.pluginPath).toBe('/plugins/my-plugin');
      expect(err.cause).toBe(cause);
      expect(err.message).toContain('/plugins/my-plugin');
      expect(err.message).toContain('kaput');
    });

    it('promise tap that rejects', async () => {
      const hooks = createKernelHooks();
      hooks.serviceAssembled.tapPromise('async-plugin', async () => {
        throw new Error('no service for you');
      });
      await expect(hooks.serviceAssembled.promise({})).rejects.toMatchObject({
        code: KernelErrorCode.PLUGIN_HOOK_FAILED,
        plugin: 'async-plugin',
        hook: 'serviceAssembled',
      });
    });

    it('callback tap that reports an error, and one that throws synchronously', async () => {
      const hooks = createKernelHooks();
      hooks.shutdown.tapAsync('cb-plugin', (_reason, callback) => callback(new Error('cb failed')));
      await expect(hooks.shutdown.promise('drain')).rejects.toMatchObject({
        plugin: 'cb-plugin',
        hook: 'shutdown',
      });

      const other = createKernelHooks();
      other.shutdown.tapAsync('throwing-cb-plugin', () => {
        throw new Error('thrown');
      });
      await expect(other.shutdown.promise('drain')).rejects.toMatchObject({
        code: KernelErrorCode.PLUGIN_HOOK_FAILED,
        plugin: 'throwing-cb-plugin',
      });
    });

    it('stops the series at the failing tap', async () => {
      const hooks = createKernelHooks();
      const seen: string[] = [];
      hooks.shutdown.tapPromise('ok', async () => void seen.push('ok'));
      hooks.shutdown.tapPromise('bad', async () => {
        throw new Error('bad');
      });
      hooks.shutdown.tapPromise('never', async () => void seen.push('never'));
      await expect(hooks.shutdown.promise('x')).rejects.toMatchObject({ plugin: 'bad' });
      expect(seen).toEqual(['ok']);
    });
  });

  describe('stagePluginTaps (what a plugin apply() receives)', () => {
    it('buffers taps until commit, then registers them with the plugin path', () => {
      const hooks = createKernelHooks();
      const staged = stagePluginTaps(hooks, '/plugins/p');
      const seen: unknown[] = [];
      staged.view.configLoaded.tap('p', (c) => seen.push(c));
      hooks.configLoaded.call('before');
      expect(seen).toEqual([]);
      staged.commit();
      hooks.configLoaded.call('after');
      expect(seen).toEqual(['after']);
      expect((hooks.configLoaded.taps[0] as { pluginPath?: string }).pluginPath).toBe('/plugins/p');
    });

    it('offers only tap methods: no call, no async taps on sync hooks', () => {
      const hooks = createKernelHooks();
      const { view } = stagePluginTaps(hooks, '/plugins/p');
      expect('call' in view.configLoaded).toBe(false);
      expect('tapAsync' in view.configLoaded).toBe(false);
      expect('promise' in view.shutdown).toBe(false);
      expect(typeof view.shutdown.tapPromise).toBe('function');
      expect(Object.isFrozen(view)).toBe(true);
    });

    it('rejects a tap without a name', () => {
      const { view } = stagePluginTaps(createKernelHooks(), '/plugins/p');
      expect(() => view.configLoaded.tap('  ', () => undefined)).toThrow(/needs a name/);
    });
  });
});

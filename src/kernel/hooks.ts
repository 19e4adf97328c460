// The kernel's hook catalogue: every hook is declared here, once, with its argument names and semantics.
//
// Plugins tap hooks (with their name, ordered by `stage`/`before`, never by file order); they never create
// or call them — a plugin's `apply(hooks)` receives a tap-only view (`PluginHooks`). The kernel calls the
// hooks in this order:
//
//   loadPlugins:     registerBuilders → registerWriters → pluginsRegistered
//   the kernel:      configLoaded → serviceAssembled → … → shutdown
//
// Every tap is guarded: whatever a tap throws (or rejects with, or passes to its callback) surfaces as a
// PluginError with code PLUGIN_HOOK_FAILED carrying `{plugin, hook, pluginPath, cause}` (Rollup's
// throwPluginError), so a failure always says which plugin broke which hook.
import { AsyncSeriesHook, SyncHook } from 'tapable';
import { KernelErrorCode, PluginError } from './errors.js';
import type { BuilderRegistrar, PluginRegistry, WriterRegistrar } from './plugin-registry.js';

/** Extra tap option: the package a tap comes from. The loader sets it for plugin taps. */
export interface TapOrigin {
  pluginPath?: string;
}

/** Why the process is shutting down, e.g. `SIGTERM`, `SIGINT`, `drain`, `fatal`. */
export type ShutdownReason = string;

/**
 * The hook catalogue. `TConfig` is the frozen config type and `TService` the assembled service plan;
 * plugins see them as `unknown` and narrow what they use.
 */
export interface KernelHooks<TConfig = unknown, TService = unknown> {
  /** The config is loaded, validated and frozen. Sync, every tap runs in stage order; return ignored. */
  readonly configLoaded: SyncHook<[config: TConfig], void, TapOrigin>;
  /** Builders register here: the loader adds discovered builder packages; taps may add in-process ones. Sync, in series. */
  readonly registerBuilders: SyncHook<[registrar: BuilderRegistrar], void, TapOrigin>;
  /** Writers register here, after builders; same rules as registerBuilders. Sync, in series. */
  readonly registerWriters: SyncHook<[registrar: WriterRegistrar], void, TapOrigin>;
  /** Every plugin is registered; the registry is final and read-only. Sync, in series. */
  readonly pluginsRegistered: SyncHook<[registry: PluginRegistry], void, TapOrigin>;
  /** The services are assembled and about to start. Async, runs in series; each tap is awaited. */
  readonly serviceAssembled: AsyncSeriesHook<[service: TService], TapOrigin>;
  /** The process is stopping. Async, runs in series; each tap is awaited before the next. */
  readonly shutdown: AsyncSeriesHook<[reason: ShutdownReason], TapOrigin>;
}

export type KernelHookName = keyof KernelHooks;

/** The hooks that only take synchronous taps (`tap`). */
const SYNC_HOOKS: ReadonlySet<KernelHookName> = new Set([
  'configLoaded',
  'registerBuilders',
  'registerWriters',
  'pluginsRegistered',
]);

/** Creates the frozen catalogue. One per kernel (one per process in practice). */
export function createKernelHooks<TConfig = unknown, TService = unknown>(): KernelHooks<TConfig, TService> {
  const hooks: KernelHooks<TConfig, TService> = {
    configLoaded: new SyncHook(['config'], 'configLoaded'),
    registerBuilders: new SyncHook(['registrar'], 'registerBuilders'),
    registerWriters: new SyncHook(['registrar'], 'registerWriters'),
    pluginsRegistered: new SyncHook(['registry'], 'pluginsRegistered'),
    serviceAssembled: new AsyncSeriesHook(['service'], 'serviceAssembled'),
    shutdown: new AsyncSeriesHook(['reason'], 'shutdown'),
  };
  for (const [name, hook] of Object.entries(hooks) as [string, AnyHook][]) {
    hook.intercept({ register: (tap) => ({ ...tap, fn: guardTapFn(tap, name) }) });
  }
  return Object.freeze(hooks);
}

/** Names of all hooks, in the order the kernel calls them (for docs and `blockx plugins`). */
export const KERNEL_HOOK_NAMES: readonly KernelHookName[] = Object.freeze([
  'registerBuilders',
  'registerWriters',
  'pluginsRegistered',
  'configLoaded',
  'serviceAssembled',
  'shutdown',
]);

type AnyHook = SyncHook<unknown[], unknown, TapOrigin>;
type GuardedTap = Parameters<NonNullable<Parameters<AnyHook['intercept']>[0]['register']>>[0];
type AnyFn = (...args: unknown[]) => unknown;

function guardTapFn(tap: GuardedTap, hook: string): AnyFn {
  const fn = tap.fn as AnyFn;
  const fail = (cause: unknown): PluginError => hookError(cause, tap, hook);
  switch (tap.type) {
    case 'sync':
      return (...args) => {
        try {
          return fn(...args);
        } catch (err) {
          throw fail(err);
        }
      };
    case 'promise':
      return async (...args) => {
        try {
          return await fn(...args);
        } catch (err) {
          throw fail(err);
        }
      };
    case 'async':
      return (...args) => {
        const callback = args.pop() as (err?: unknown, result?: unknown) => void;
        let settled = false;
        const settle = (err?: unknown, result?: unknown): void => {
          if (settled) return;
          settled = true;
          if (err) callback(fail(err));
          else callback(null, result);
        };
        try {
          fn(...args, settle);
        } catch (err) {
          settle(err ?? new Error('tap threw a falsy value'));
        }
      };
    default: {
      const _exhaustive: never = tap.type;
      return _exhaustive;
    }
  }
}

function hookError(cause: unknown, tap: GuardedTap, hook: string): PluginError {
  // A nested hook call inside a tap already produced a precise error; keep it.
  if (cause instanceof PluginError && cause.code === KernelErrorCode.PLUGIN_HOOK_FAILED) return cause;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new PluginError(
    KernelErrorCode.PLUGIN_HOOK_FAILED,
    {
      pluginPath: tap.pluginPath ?? `(in-process tap "${tap.name}")`,
      plugin: tap.name,
      hook,
      message: `hook ${hook} failed: ${detail}`,
    },
    { cause },
  );
}

type TapMethod = 'tap' | 'tapAsync' | 'tapPromise';
type TapOnly<H> = Pick<H, Extract<keyof H, TapMethod>>;

/** What a plugin's `apply(hooks)` receives: the catalogue with tap methods only. */
export type PluginHooks = { readonly [K in KernelHookName]: TapOnly<KernelHooks[K]> };

type TapOptions = string | ({ name: string; stage?: number; before?: string } & TapOrigin);

/**
 * A tap-only view for one plugin whose taps are buffered until `commit()`. The loader calls a plugin's
 * `apply(view)` and commits only if `apply` returns normally, so a plugin that throws half-way through
 * leaves no taps behind. Every committed tap carries the plugin's path.
 */
export function stagePluginTaps(
  hooks: KernelHooks,
  pluginPath: string,
): { view: PluginHooks; commit: () => void } {
  const pending: (() => void)[] = [];
  const view = {} as Record<KernelHookName, Partial<Record<TapMethod, (o: TapOptions, fn: AnyFn) => void>>>;
  for (const name of Object.keys(hooks) as KernelHookName[]) {
    const hook = hooks[name] as unknown as Record<TapMethod, (o: TapOptions, fn: AnyFn) => void>;
    const methods: TapMethod[] = SYNC_HOOKS.has(name) ? ['tap'] : ['tap', 'tapAsync', 'tapPromise'];
    const entry: Partial<Record<TapMethod, (o: TapOptions, fn: AnyFn) => void>> = {};
    for (const method of methods) {
      entry[method] = (options, fn) => {
        const opts = typeof options === 'string' ? { name: options } : { ...options };
        if (typeof opts.name !== 'string' || opts.name.trim() === '') {
          throw new TypeError(`hooks.${name}.${method}: a tap needs a name (the plugin's name)`);
        }
        if (typeof fn !== 'function') throw new TypeError(`hooks.${name}.${method}: fn must be a function`);
        pending.push(() => hook[method]({ ...opts, pluginPath }, fn));
      };
    }
    view[name] = Object.freeze(entry);
  }
  return {
    view: Object.freeze(view) as unknown as PluginHooks,
    commit: () => pending.splice(0).forEach((add) => add()),
  };
}

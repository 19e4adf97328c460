import { describe, expect, it } from 'vitest';
import { sectionDefaults } from '../../../../../../src/kernel/config-fields/index.js';
import { BlockxError } from '../../../../../../src/kernel/errors.js';
import {
  DEFAULT_DISPATCHER_CONFIG,
  resolveDispatcherConfig,
  validateDispatcherConfig,
  type DispatcherConfig,
} from '../../../../../../src/services/call-host/core/dispatcher/config.js';
import { DispatcherCore } from '../../../../../../src/services/call-host/core/dispatcher/dispatcher-core.js';
import {
  DispatcherConfigError,
  DispatcherError,
  DispatcherErrorCode,
} from '../../../../../../src/services/call-host/core/dispatcher/errors.js';

describe('DispatcherErrorCode', () => {
  it('every key equals its value', () => {
    for (const [k, v] of Object.entries(DispatcherErrorCode)) expect(v).toBe(k);
  });

  it('DispatcherError is a BlockxError with a stable code and structured fields', () => {
    const e = new DispatcherError(DispatcherErrorCode.INVALID_CALL, 'bad', { taskId: 't', callIndex: 3 });
    expect(e).toBeInstanceOf(BlockxError);
    expect(e).toMatchObject({ code: 'INVALID_CALL', taskId: 't', callIndex: 3, name: 'DispatcherError' });
  });
});

describe('dispatcher config', () => {
  it("the worker settings' defaults are the config field table's, and valid", () => {
    const worker = sectionDefaults('worker');
    const shared = Object.keys(DEFAULT_DISPATCHER_CONFIG).filter((k) => k in worker);
    expect(shared.sort()).toEqual(
      [
        'callDeadlineMs',
        'callPageRows',
        'callRetry',
        'maxCollectedOutputBytes',
        'taskMaxCallAttempts',
        'taskMaxInflightCalls',
        'taskMaxPendingSubcalls',
      ].sort(),
    );
    for (const k of shared) expect(DEFAULT_DISPATCHER_CONFIG[k as keyof DispatcherConfig]).toEqual(worker[k]);
    expect(validateDispatcherConfig(DEFAULT_DISPATCHER_CONFIG)).toEqual([]);
  });

  it('merges callRetry field by field and ignores undefined overrides', () => {
    const d = DEFAULT_DISPATCHER_CONFIG;
    const c = resolveDispatcherConfig({
      callRetry: { maxAttempts: d.callRetry.maxAttempts + 2 },
      callDeadlineMs: undefined,
    });
    expect(c.callRetry).toEqual({ ...d.callRetry, maxAttempts: d.callRetry.maxAttempts + 2 });
    expect(c.callDeadlineMs).toBe(d.callDeadlineMs);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    { override: { taskMaxInflightCalls: 0 }, path: 'taskMaxInflightCalls' },
    { override: { callDeadlineMs: 1.5 }, path: 'callDeadlineMs' },
    { override: { maxCollectedOutputBytes: -1 }, path: 'maxCollectedOutputBytes' },
    { override: { callRetry: { maxAttempts: 0 } }, path: 'callRetry.maxAttempts' },
    { override: { callRetry: { initialBackoffMs: 100, maxBackoffMs: 50 } }, path: 'callRetry.maxBackoffMs' },
    { override: { initialWindow: 4, minWindow: 8 }, path: 'minWindow' },
    { override: { maxSubcallDepth: -1 }, path: 'maxSubcallDepth' },
  ])('rejects $path', ({ override, path }) => {
    let thrown: unknown;
    try {
      resolveDispatcherConfig(override);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DispatcherConfigError);
    expect((thrown as DispatcherConfigError).code).toBe('INVALID_CONFIG');
    expect((thrown as DispatcherConfigError).issues.map((i) => i.path)).toEqual([path]);
  });

  it('the core refuses an invalid config', () => {
    expect(() => new DispatcherCore({ ...DEFAULT_DISPATCHER_CONFIG, initialWindow: 0 })).toThrow(
      DispatcherConfigError,
    );
  });
});

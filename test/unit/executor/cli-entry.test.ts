import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withExecutorDefaults } from '../../../src/cli/commands/executor.js';
import { parseExecutorArgs } from '../../../src/executor/cli-entry.js';
import { EXECUTOR_SETTING_FLAGS, executorSettingArgs } from '../../../src/executor/executor-settings.js';
import { TOP_LEVEL_DEFAULTS, defaultExecutorConfig } from '../../../src/kernel/config-defaults.js';
import { checkExecuteCall } from '../../../src/executor/executor-main.js';
import type { ExecuteCallMessage } from '../../../src/executor/protocol.js';

/** Every flag the Worker passes, with values unlike the table's defaults. */
const FULL = [
  '--socket',
  '/tmp/x.sock',
  '--functions-dir',
  'fns',
  '--threads',
  '3',
  '--heartbeat-interval-ms',
  '50',
  '--cancel-hard-limit-ms',
  '200',
  '--max-calls-per-thread',
  '8',
  '--read-copy-max-entries',
  '0',
  '--isolation',
  'none',
  '--thread-heap-mb',
  '64',
  '--thread-memory-mb',
  '0',
  '--max-rss-mb',
  '512',
];
const SETTINGS = {
  threads: 3,
  heartbeatIntervalMs: 50,
  cancelHardLimitMs: 200,
  maxCallsPerThread: 8,
  readCopyMaxEntries: 0,
  isolation: 'none',
  threadHeapMb: 64,
  threadMemoryMb: 0,
  maxRssMb: 512,
};
/** FULL with one flag (and its value) left out. */
const without = (flag: string) => FULL.filter((_, i) => FULL[i] !== flag && FULL[i - 1] !== flag);
/** FULL with one flag's value replaced. */
const withValue = (flag: string, value: string) => FULL.map((a, i) => (FULL[i - 1] === flag ? value : a));

describe('executor flags', () => {
  it('parses every flag', () => {
    expect(parseExecutorArgs(FULL)).toEqual({
      ...SETTINGS,
      socketPath: '/tmp/x.sock',
      functionsDir: resolve('fns'),
    });
  });

  it('round-trips the settings the supervisor writes', () => {
    const settings = { ...SETTINGS, isolation: 'none' as const };
    expect(
      parseExecutorArgs(['--socket', 's', '--functions-dir', 'f', ...executorSettingArgs(settings)]),
    ).toMatchObject(settings);
  });

  // No setting has a default in the executor: the Worker passes each, `blockx executor` fills the table's.
  it.each(
    Object.values(EXECUTOR_SETTING_FLAGS)
      .map(({ flag }) => `--${flag}`)
      .concat('--socket', '--functions-dir'),
  )('a missing %s is a usage error, not a default', (flag) => {
    expect(() => parseExecutorArgs(without(flag))).toThrow(`${flag} `);
  });

  it.each([
    [withValue('--threads', '0'), /--threads must be a positive integer/],
    [withValue('--threads', 'two'), /--threads must be a positive integer/],
    [[...FULL, '--bogus'], /Unknown option/],
    [
      [...without('--read-copy-max-entries'), '--read-copy-max-entries=-1'],
      /--read-copy-max-entries must be a whole number >= 0/,
    ],
    [withValue('--read-copy-max-entries', '1.5'), /--read-copy-max-entries must be a whole number >= 0/],
    [withValue('--isolation', 'thread'), /--isolation must be task or none/],
    [withValue('--thread-heap-mb', '0'), /--thread-heap-mb must be a positive integer/],
    [
      [...without('--thread-memory-mb'), '--thread-memory-mb=-1'],
      /--thread-memory-mb must be a whole number >= 0/,
    ],
    [withValue('--max-rss-mb', '1e3'), /--max-rss-mb must be a whole number >= 0/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseExecutorArgs(argv)).toThrow(message);
  });
});

describe('blockx executor fills in the config table for the flags not given', () => {
  it('gives every setting the table default, and the functions dir from BLOCKX_FUNCTIONS_DIR', () => {
    const table = defaultExecutorConfig();
    const parsed = parseExecutorArgs(
      withExecutorDefaults(['--socket', 's'], { BLOCKX_FUNCTIONS_DIR: '/srv/f' }),
    );
    expect(parsed.functionsDir).toBe('/srv/f');
    for (const key of Object.keys(EXECUTOR_SETTING_FLAGS) as (keyof typeof EXECUTOR_SETTING_FLAGS)[])
      expect(parsed[key], key).toBe(table[key]);
    expect(parseExecutorArgs(withExecutorDefaults(['--socket', 's'], {})).functionsDir).toBe(
      resolve(TOP_LEVEL_DEFAULTS.functions.dir),
    );
  });

  it('keeps the flags given, in either form', () => {
    const argv = withExecutorDefaults(
      ['--socket', 's', '--threads', '7', '--isolation=none', '--functions-dir', 'x'],
      {},
    );
    expect(parseExecutorArgs(argv)).toMatchObject({
      threads: 7,
      isolation: 'none',
      functionsDir: resolve('x'),
    });
  });
});

describe('ExecuteCall validation', () => {
  const ok: ExecuteCallMessage = {
    type: 'ExecuteCall',
    taskId: 't',
    callId: 'c',
    attempt: 1,
    function: 'f',
    args: [],
    codeEpoch: 'e',
    budgetMs: 0,
  };
  it.each([
    [{}, undefined],
    [{ callId: '' }, 'callId must be a non-empty string'],
    [{ attempt: 0 }, 'attempt must be a positive integer'],
    [{ function: 7 }, 'function must be a non-empty string'],
    [{ codeEpoch: '' }, 'codeEpoch must be a non-empty string'],
    [{ args: 'x' }, 'args must be an array'],
    [{ budgetMs: -1 }, 'budgetMs must be a number >= 0'],
    [{ ioCache: 'phase-1' }, undefined],
    [{ ioCache: '' }, 'ioCache must be a non-empty string when present'],
    [{ ioCache: 7 }, 'ioCache must be a non-empty string when present'],
  ])('%j → %s', (patch, problem) => {
    expect(checkExecuteCall({ ...ok, ...patch } as unknown as ExecuteCallMessage)).toBe(problem);
  });
});

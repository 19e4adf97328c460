import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExecutorArgs } from '../../../src/executor/cli-entry.js';
import { checkExecuteCall } from '../../../src/executor/executor-main.js';
import type { ExecuteCallMessage } from '../../../src/executor/protocol.js';

describe('executor flags', () => {
  it('parses every flag', () => {
    expect(
      parseExecutorArgs(
        [
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
        ],
        {},
      ),
    ).toEqual({
      isolation: 'none',
      threadHeapMb: 64,
      threadMemoryMb: 0,
      maxRssMb: 512,
      socketPath: '/tmp/x.sock',
      functionsDir: resolve('fns'),
      threads: 3,
      heartbeatIntervalMs: 50,
      cancelHardLimitMs: 200,
      maxCallsPerThread: 8,
      readCopyMaxEntries: 0,
    });
  });

  it('takes the functions dir from BLOCKX_FUNCTIONS_DIR, then ./functions', () => {
    expect(parseExecutorArgs(['--socket', 's'], { BLOCKX_FUNCTIONS_DIR: '/srv/f' }).functionsDir).toBe(
      '/srv/f',
    );
    expect(parseExecutorArgs(['--socket', 's'], {}).functionsDir).toBe(resolve('functions'));
  });

  it.each([
    [[], /--socket PATH is required/],
    [['--socket', 's', '--threads', '0'], /--threads must be a positive integer/],
    [['--socket', 's', '--threads', 'two'], /--threads must be a positive integer/],
    [['--socket', 's', '--bogus'], /Unknown option/],
    [['--socket', 's', '--read-copy-max-entries=-1'], /--read-copy-max-entries must be a whole number >= 0/],
    [
      ['--socket', 's', '--read-copy-max-entries', '1.5'],
      /--read-copy-max-entries must be a whole number >= 0/,
    ],
    [['--socket', 's', '--isolation', 'thread'], /--isolation must be task or none/],
    [['--socket', 's', '--thread-heap-mb', '0'], /--thread-heap-mb must be a positive integer/],
    [['--socket', 's', '--thread-memory-mb=-1'], /--thread-memory-mb must be a whole number >= 0/],
    [['--socket', 's', '--max-rss-mb', '1e3'], /--max-rss-mb must be a whole number >= 0/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseExecutorArgs(argv, {})).toThrow(message);
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

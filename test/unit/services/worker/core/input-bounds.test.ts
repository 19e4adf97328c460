// The input bounds of docs/security.md § Input bounds, as the Worker core enforces them: slot TTL
// (maxSlotTtlMs), task/slot id length, ids per WatchTasks. Each refusal is InvalidArgument, names the
// limit, and leaves the core unchanged.

import { describe, expect, it } from 'vitest';
import { MAX_ID_BYTES } from '../../../../../src/kernel/input-bounds.js';
import {
  MAX_WATCH_TASK_IDS,
  TaskState,
  acceptWatchTaskIds,
  type WorkerCore,
} from '../../../../../src/services/worker/core/index.js';
import { admissionError, makeCore, taskInput } from './harness.js';

const MAX_TTL = 60_000;
const MiB = 1024 * 1024;
/** `n` bytes of UTF-8 made of 3-byte characters (plus ASCII padding). */
const threeByteId = (bytes: number): string => '€'.repeat(Math.floor(bytes / 3)) + 'x'.repeat(bytes % 3);

describe('RequestTaskSlot ttl_ms bound (maxSlotTtlMs)', () => {
  const cases: [string, number, 'ok' | string][] = [
    ['1 ms', 1, 'ok'],
    ['the default TTL', 5_000, 'ok'],
    ['exactly the maximum', MAX_TTL, 'ok'],
    ['one above the maximum', MAX_TTL + 1, `ttlMs must be <= maxSlotTtlMs (${MAX_TTL})`],
    ['2^53 - 1 (held forever)', Number.MAX_SAFE_INTEGER, `ttlMs must be <= maxSlotTtlMs (${MAX_TTL})`],
    ['0', 0, 'ttlMs must be a positive integer'],
    ['negative', -1, 'ttlMs must be a positive integer'],
    ['fractional', 1.5, 'ttlMs must be a positive integer'],
    ['beyond safe integers', 2 ** 60, 'ttlMs must be a positive integer'],
    ['Infinity', Number.POSITIVE_INFINITY, 'ttlMs must be a positive integer'],
  ];
  it.each(cases)('%s', (_name, ttlMs, expected) => {
    const core = makeCore({ maxSlotTtlMs: MAX_TTL });
    if (expected === 'ok') {
      const step = core.handleRequestTaskSlot('t', ttlMs, 100);
      expect(step.result).toMatchObject({ state: TaskState.ALLOCATED, leaseDeadlineMs: 100 + ttlMs });
      return;
    }
    const err = admissionError(() => core.handleRequestTaskSlot('t', ttlMs, 100), 'InvalidArgument');
    expect(err.message).toBe(`InvalidArgument: ${expected}`);
    expect(err.detail).toMatchObject({ field: 'ttlMs', value: ttlMs });
    expect(core.deriveHeartbeat(0).reservedSlots).toBe(0);
  });

  it('also bounds a repeated request for a held slot (no renewing past the limit)', () => {
    const core = makeCore({ maxSlotTtlMs: MAX_TTL });
    core.handleRequestTaskSlot('t', 1_000, 0);
    admissionError(() => core.handleRequestTaskSlot('t', MAX_TTL + 1, 10), 'InvalidArgument');
    expect(core.handleRequestTaskSlot('t', 1_000, 20).result.leaseDeadlineMs).toBe(1_020);
  });

  it('uses the default maximum (60000) when none is configured', () => {
    const core = makeCore();
    expect(core.handleRequestTaskSlot('a', 60_000, 0).result.state).toBe(TaskState.ALLOCATED);
    admissionError(() => core.handleRequestTaskSlot('b', 60_001, 0), 'InvalidArgument');
  });
});

describe('task id and slot id length', () => {
  type Rpc = (core: WorkerCore, id: string) => unknown;
  const rpcs: [string, Rpc][] = [
    ['RequestTaskSlot', (c, id) => c.handleRequestTaskSlot(id, 1_000, 0)],
    ['SubmitTask', (c, id) => c.handleSubmitTask(taskInput(id), undefined, 0)],
    ['GetTaskResult', (c, id) => c.handleGetTaskResult(id, 0)],
  ];
  const ids: [string, string, boolean][] = [
    ['a uuid', '3f2b1c9e-8a4d-4c1e-9b0a-6f7e5d4c3b2a', true],
    [`${MAX_ID_BYTES} ASCII bytes`, 'x'.repeat(MAX_ID_BYTES), true],
    [`${MAX_ID_BYTES} bytes of 3-byte characters`, threeByteId(MAX_ID_BYTES), true],
    [`${MAX_ID_BYTES + 1} ASCII bytes`, 'x'.repeat(MAX_ID_BYTES + 1), false],
    ['86 three-byte characters (258 bytes, 86 code units)', '€'.repeat(86), false],
    ['1 MiB', 'x'.repeat(MiB), false],
  ];
  for (const [rpc, call] of rpcs) {
    it.each(ids)(`${rpc}: %s`, (_name, id, accepted) => {
      const core = makeCore();
      if (accepted) {
        // GetTaskResult of an unknown id is NotFound, which still means the id passed validation.
        try {
          call(core, id);
        } catch (err) {
          expect((err as { code?: string }).code).toBe('NotFound');
        }
        return;
      }
      const err = admissionError(() => call(core, id), 'InvalidArgument');
      expect(err.message).toBe(`InvalidArgument: taskId must be at most ${MAX_ID_BYTES} bytes (UTF-8)`);
      // The error carries only a short preview of the id: it is logged and becomes a status message.
      expect(String((err.detail as { value: unknown }).value).length).toBeLessThan(100);
      expect(core.deriveHeartbeat(0).reservedSlots).toBe(0);
    });
  }

  it('SubmitTask refuses an over-long slot id before looking it up', () => {
    const core = makeCore();
    const err = admissionError(
      () => core.handleSubmitTask(taskInput('t'), 's'.repeat(MAX_ID_BYTES + 1), 0),
      'InvalidArgument',
    );
    expect(err.message).toBe(`InvalidArgument: slotId must be at most ${MAX_ID_BYTES} bytes (UTF-8)`);
    expect(err.detail).toMatchObject({ field: 'slotId' });
  });

  it('SubmitTask with a bounded but unknown slot id is still InvalidSlot', () => {
    const core = makeCore();
    admissionError(() => core.handleSubmitTask(taskInput('t'), 's'.repeat(MAX_ID_BYTES), 0), 'InvalidSlot');
  });
});

describe('acceptWatchTaskIds', () => {
  const many = (n: number): string[] => Array.from({ length: n }, (_, i) => `t${i}`);
  const cases: [string, string[], string[] | string][] = [
    ['keeps request order', ['b', 'a', 'c'], ['b', 'a', 'c']],
    ['dedupes to the first occurrence', ['a', 'b', 'a', 'c', 'b'], ['a', 'b', 'c']],
    ['keeps an empty id (answers not_found)', ['', 'a'], ['', 'a']],
    ['accepts exactly the cap', many(MAX_WATCH_TASK_IDS), many(MAX_WATCH_TASK_IDS)],
    [
      'counts distinct ids: the cap repeated twice is fine',
      [...many(MAX_WATCH_TASK_IDS), ...many(MAX_WATCH_TASK_IDS)],
      many(MAX_WATCH_TASK_IDS),
    ],
    [
      'refuses one above the cap',
      many(MAX_WATCH_TASK_IDS + 1),
      `taskIds must name at most ${MAX_WATCH_TASK_IDS} distinct ids, got ${MAX_WATCH_TASK_IDS + 1}`,
    ],
    [
      'refuses 200,000 ids',
      many(200_000),
      `taskIds must name at most ${MAX_WATCH_TASK_IDS} distinct ids, got 200000`,
    ],
    [
      'refuses an over-long id',
      ['a', 'x'.repeat(MAX_ID_BYTES + 1)],
      `taskIds must hold ids of at most ${MAX_ID_BYTES} bytes (UTF-8)`,
    ],
  ];
  it.each(cases)('%s', (_name, ids, expected) => {
    if (Array.isArray(expected)) {
      expect(acceptWatchTaskIds(ids)).toEqual(expected);
      return;
    }
    const err = admissionError(() => acceptWatchTaskIds(ids), 'InvalidArgument');
    expect(err.message).toBe(`InvalidArgument: ${expected}`);
  });
});

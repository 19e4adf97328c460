// The Worker's recent-task ring (src/services/worker/core/recent-tasks.ts): records and counters,
// the `afterSeq` cursor, the capacity bound and what `truncated` says, the failure-message bound.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_FAILURE_MESSAGE_CHARS,
  MAX_RECENT_TASKS_PER_LIST,
  RecentTasks,
  cutText,
} from '../../../../../src/services/worker/core/recent-tasks.js';

const admit = (r: RecentTasks, taskId: string, now: number): void =>
  r.admitted({ taskId, builder: 'CallListCallConfig', now });
const succeed = (r: RecentTasks, taskId: string, now: number): void =>
  r.ended({ taskId, succeeded: true, failureCode: '', failureMessage: '', now, codeVersion: 'v1' });
const fail = (r: RecentTasks, taskId: string, now: number, message = 'boom'): void =>
  r.ended({ taskId, succeeded: false, failureCode: 'CALL_FAILED', failureMessage: message, now });

describe('RecentTasks records', () => {
  it('an admitted task is RUNNING, then its end replaces the record and keeps the start', () => {
    const r = new RecentTasks();
    admit(r, 't1', 100);
    expect(r.list(0, 0).tasks).toEqual([
      expect.objectContaining({ taskId: 't1', state: 'RUNNING', startedAtMs: 100, endedAtMs: 0, seq: 1 }),
    ]);
    succeed(r, 't1', 250);
    const page = r.list(0, 0);
    expect(page.tasks).toEqual([
      {
        taskId: 't1',
        state: 'SUCCEEDED',
        startedAtMs: 100,
        endedAtMs: 250,
        builder: 'CallListCallConfig',
        failureCode: '',
        failureMessage: '',
        codeVersion: 'v1',
        seq: 2,
      },
    ]);
    expect(page).toMatchObject({ lastSeq: 2, succeededTotal: 1, failedTotal: 0, truncated: false });
  });

  const endings: [string, (r: RecentTasks) => void, { succeeded: number; failed: number; state: string }][] =
    [
      ['success', (r) => succeed(r, 't', 2), { succeeded: 1, failed: 0, state: 'SUCCEEDED' }],
      ['failure', (r) => fail(r, 't', 2), { succeeded: 0, failed: 1, state: 'FAILED' }],
    ];
  it.each(endings)('counters after a %s', (_name, end, want) => {
    const r = new RecentTasks();
    admit(r, 't', 1);
    end(r);
    const page = r.list(0, 0);
    expect([page.succeededTotal, page.failedTotal]).toEqual([want.succeeded, want.failed]);
    expect(page.tasks[0]?.state).toBe(want.state);
  });

  it('an end without an admission record uses what the end event says', () => {
    const r = new RecentTasks();
    r.ended({
      taskId: 'x',
      succeeded: false,
      failureCode: 'TIMED_OUT',
      failureMessage: 'late',
      now: 50,
      startedAtMs: 10,
      builder: 'B',
    });
    expect(r.list(0, 0).tasks[0]).toMatchObject({
      startedAtMs: 10,
      endedAtMs: 50,
      builder: 'B',
      state: 'FAILED',
    });
  });

  it('cuts a failure message to the bound, ending in an ellipsis', () => {
    const r = new RecentTasks();
    fail(r, 't', 1, 'x'.repeat(10_000));
    const message = r.list(0, 0).tasks[0]!.failureMessage;
    expect(Array.from(message)).toHaveLength(MAX_FAILURE_MESSAGE_CHARS);
    expect(message.endsWith('…')).toBe(true);
  });
});

describe('cutText', () => {
  const cases: [string, string, number, string][] = [
    ['short text is kept', 'abc', 5, 'abc'],
    ['exact length is kept', 'abcde', 5, 'abcde'],
    ['long text is cut with an ellipsis', 'abcdefgh', 5, 'abcd…'],
    ['surrogate pairs are never split', '😀😀😀😀😀😀', 3, '😀😀…'],
  ];
  it.each(cases)('%s', (_name, text, max, want) => expect(cutText(text, max)).toBe(want));
});

describe('RecentTasks cursor', () => {
  it('returns only records changed after the cursor, newest change first', () => {
    const r = new RecentTasks();
    admit(r, 'a', 1); // seq 1
    admit(r, 'b', 2); // seq 2
    succeed(r, 'a', 3); // seq 3
    expect(r.list(0, 0).tasks.map((t) => `${t.taskId}:${t.seq}`)).toEqual(['a:3', 'b:2']);
    expect(r.list(2, 0).tasks.map((t) => t.taskId)).toEqual(['a']);
    expect(r.list(3, 0).tasks).toEqual([]);
    expect(r.list(3, 0).truncated).toBe(false);
  });

  const cursors: [string, number][] = [
    ['beyond lastSeq (another process)', 99],
    ['negative', -1],
    ['NaN', Number.NaN],
  ];
  it.each(cursors)('a cursor %s reads as 0', (_name, cursor) => {
    const r = new RecentTasks();
    admit(r, 'a', 1);
    expect(r.list(cursor, 0).tasks).toHaveLength(1);
  });

  it('a limit smaller than the changes sets truncated', () => {
    const r = new RecentTasks();
    for (let i = 0; i < 5; i++) admit(r, `t${i}`, i);
    const page = r.list(0, 2);
    expect(page.tasks.map((t) => t.taskId)).toEqual(['t4', 't3']);
    expect(page.truncated).toBe(true);
  });

  it('a limit of 0 or above the cap means the cap', () => {
    const r = new RecentTasks(1_000);
    for (let i = 0; i < 300; i++) admit(r, `t${i}`, i);
    expect(r.list(0, 0).tasks).toHaveLength(MAX_RECENT_TASKS_PER_LIST);
    expect(r.list(0, 10_000).tasks).toHaveLength(MAX_RECENT_TASKS_PER_LIST);
  });
});

describe('RecentTasks capacity', () => {
  it('keeps at most `capacity` records, dropping the least recently changed', () => {
    const r = new RecentTasks(3);
    admit(r, 'a', 1);
    admit(r, 'b', 2);
    admit(r, 'c', 3);
    succeed(r, 'a', 4); // a is now the most recent change
    admit(r, 'd', 5); // drops b
    expect(r.size).toBe(3);
    expect(r.list(0, 0).tasks.map((t) => t.taskId)).toEqual(['d', 'a', 'c']);
  });

  it('counters include tasks whose records were dropped', () => {
    const r = new RecentTasks(2);
    for (let i = 0; i < 10; i++) {
      admit(r, `t${i}`, i);
      if (i % 3 === 0) fail(r, `t${i}`, i);
      else succeed(r, `t${i}`, i);
    }
    const page = r.list(0, 0);
    expect(page.tasks).toHaveLength(2);
    expect(page.succeededTotal + page.failedTotal).toBe(10);
    expect(page.failedTotal).toBe(4);
  });

  const truncation: [string, number, boolean][] = [
    ['a cursor before a dropped change is truncated', 1, true],
    ['a cursor after every dropped change is not', 4, false],
    ['a cursor of 0 (everything retained) is not', 0, false],
  ];
  it.each(truncation)('%s', (_name, cursor, want) => {
    const r = new RecentTasks(2);
    admit(r, 'a', 1); // seq 1
    admit(r, 'b', 2); // seq 2
    admit(r, 'c', 3); // seq 3, drops a (seq 1)
    admit(r, 'd', 4); // seq 4, drops b (seq 2)
    expect(r.list(cursor, 0).truncated).toBe(want);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new RecentTasks(0)).toThrow(RangeError);
    expect(() => new RecentTasks(1.5)).toThrow(RangeError);
  });
});

describe('property: a reader following the cursor sees what the ring holds', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('admit' as const), id: fc.nat(12) }),
    fc.record({ kind: fc.constant('end' as const), id: fc.nat(12), ok: fc.boolean() }),
    fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 0, max: 6 }) }),
  );

  it('holds for any capacity, limit and interleaving', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 150 }), (capacity, ops) => {
        const ring = new RecentTasks(capacity);
        const view = new Map<string, number>(); // task id -> seq, as the reader last saw it
        let cursor = 0;
        let ends = 0;
        let now = 0;
        for (const o of ops) {
          now++;
          if (o.kind === 'admit') admit(ring, `t${o.id}`, now);
          else if (o.kind === 'end') {
            ends++;
            if (o.ok) succeed(ring, `t${o.id}`, now);
            else fail(ring, `t${o.id}`, now);
          } else {
            const page = ring.list(cursor, o.limit);
            // A full read from 0 is never truncated, however much the ring dropped: no endless re-reads.
            if (cursor === 0 && o.limit === 0) expect(page.truncated).toBe(false);
            for (const t of page.tasks) view.set(t.taskId, t.seq);
            if (page.truncated) {
              cursor = 0;
              view.clear();
            } else cursor = page.lastSeq;
          }
          expect(ring.size).toBeLessThanOrEqual(capacity);
        }
        const all = ring.list(0, 0);
        expect(all.succeededTotal + all.failedTotal).toBe(ends);
        // One last untruncated read (from a reset cursor if needed) brings the reader level with the ring.
        let page = ring.list(cursor, 0);
        if (page.truncated) {
          view.clear();
          page = ring.list(0, 0);
        }
        for (const t of page.tasks) view.set(t.taskId, t.seq);
        for (const t of all.tasks) expect(view.get(t.taskId)).toBe(t.seq);
      }),
      { numRuns: 300 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import { SlotState, SlotTable } from '../../../../../src/services/worker/core/slot-table.js';
import { sequentialIds } from './harness.js';

describe('SlotTable', () => {
  it('moves a slot FREE → ALLOCATED → RUNNING → FREE with counters in step', () => {
    const table = new SlotTable(2, sequentialIds('s'));
    expect([table.free, table.reservedCount, table.runningCount]).toEqual([2, 0, 0]);

    const slot = table.allocate('t1', 100, 10);
    expect(slot).toMatchObject({
      slotId: 's1',
      taskId: 't1',
      state: SlotState.ALLOCATED,
      leaseDeadlineMs: 110,
    });
    expect(table.byTask('t1')).toBe(slot);
    expect(table.nextLeaseDeadline()).toBe(110);
    expect([table.free, table.reservedCount, table.runningCount]).toEqual([1, 1, 0]);

    table.markRunning(slot);
    expect(slot.state).toBe(SlotState.RUNNING);
    expect(slot.leaseDeadlineMs).toBeUndefined();
    expect(table.nextLeaseDeadline()).toBeUndefined();
    expect([table.free, table.reservedCount, table.runningCount]).toEqual([1, 0, 1]);

    table.release('s1');
    expect(table.get('s1')).toBeUndefined();
    expect(table.byTask('t1')).toBeUndefined();
    expect([table.free, table.reservedCount, table.runningCount]).toEqual([2, 0, 0]);
  });

  it('never hands out a slot beyond capacity or twice to one task', () => {
    const table = new SlotTable(1, sequentialIds('s'));
    table.allocate('t1', 100, 0);
    expect(() => table.allocate('t2', 100, 0)).toThrow(/no free slot/);
    const wide = new SlotTable(3, sequentialIds('s'));
    wide.allocate('t1', 100, 0);
    expect(() => wide.allocate('t1', 100, 0)).toThrow(/already holds a slot/);
  });

  it('refuses a duplicate or empty id from the generator', () => {
    const dup = new SlotTable(3, () => 'same');
    dup.allocate('t1', 100, 0);
    expect(() => dup.allocate('t2', 100, 0)).toThrow(/duplicate/);
    const empty = new SlotTable(3, () => '');
    expect(() => empty.allocate('t1', 100, 0)).toThrow(/empty/);
  });

  it('renews a lease forward only, and pops expired leases in order', () => {
    const table = new SlotTable(3, sequentialIds('s'));
    const a = table.allocate('a', 100, 0);
    table.allocate('b', 50, 0);
    table.renewLease(a, 80);
    expect(a.leaseDeadlineMs).toBe(100);
    table.renewLease(a, 150);
    expect(a.leaseDeadlineMs).toBe(150);
    expect(table.popExpiredLease(49)).toBeUndefined();
    expect(table.popExpiredLease(150)).toBe('s2');
    expect(table.popExpiredLease(150)).toBe('s1');
    expect(table.popExpiredLease(150)).toBeUndefined();
  });
});

// The slot table: the worker's single source of truth for capacity.
//
// A slot is FREE → ALLOCATED → RUNNING → FREE. FREE slots are not stored: the table holds only slots in
// use, and `free = capacity - inUse`. Every allocation gets a fresh id from the injected generator, so a
// stale slot id (from an expired reservation) can never match a later one. A slot is bound to exactly
// one task id for its whole life, and a task id holds at most one slot (`byTask`).
// ALLOCATED slots carry a lease deadline (armed in `leases`); RUNNING slots have none — a running task
// leaves only by converging.

import { TimerTable } from './timer-table.js';

export const SlotState = { ALLOCATED: 'ALLOCATED', RUNNING: 'RUNNING' } as const;
export type SlotState = (typeof SlotState)[keyof typeof SlotState];

export interface SlotRecord {
  readonly slotId: string;
  readonly taskId: string;
  state: SlotState;
  /** The TTL the slot was requested with; submission renews the lease by it. */
  readonly ttlMs: number;
  readonly allocatedAtMs: number;
  /** Absolute lease deadline while ALLOCATED; undefined once RUNNING. */
  leaseDeadlineMs: number | undefined;
}

export class SlotTable {
  private readonly bySlot = new Map<string, SlotRecord>();
  private readonly byTaskId = new Map<string, SlotRecord>();
  private readonly leases = new TimerTable<string>();
  private running = 0;

  constructor(
    readonly capacity: number,
    private readonly newSlotId: () => string,
  ) {}

  get inUse(): number {
    return this.bySlot.size;
  }
  get free(): number {
    return this.capacity - this.bySlot.size;
  }
  get reservedCount(): number {
    return this.bySlot.size - this.running;
  }
  get runningCount(): number {
    return this.running;
  }

  get(slotId: string): SlotRecord | undefined {
    return this.bySlot.get(slotId);
  }

  byTask(taskId: string): SlotRecord | undefined {
    return this.byTaskId.get(taskId);
  }

  /** All slots in use (for invariant checks and diagnostics). */
  slots(): IterableIterator<SlotRecord> {
    return this.bySlot.values();
  }

  /** FREE → ALLOCATED for `taskId`. The caller checked `free > 0` and that the task holds no slot. */
  allocate(taskId: string, ttlMs: number, now: number): SlotRecord {
    if (this.free <= 0) throw new Error('SlotTable.allocate: no free slot');
    if (this.byTaskId.has(taskId)) throw new Error(`SlotTable.allocate: task ${taskId} already holds a slot`);
    const slotId = this.newSlotId();
    if (typeof slotId !== 'string' || slotId === '' || this.bySlot.has(slotId)) {
      throw new Error(
        `SlotTable.allocate: slot id generator returned an empty or duplicate id ${String(slotId)}`,
      );
    }
    const slot: SlotRecord = {
      slotId,
      taskId,
      state: SlotState.ALLOCATED,
      ttlMs,
      allocatedAtMs: now,
      leaseDeadlineMs: now + ttlMs,
    };
    this.bySlot.set(slotId, slot);
    this.byTaskId.set(taskId, slot);
    this.leases.set(slotId, now + ttlMs);
    return slot;
  }

  /** Moves an ALLOCATED slot's lease to `max(current, until)`; a lease never shrinks. */
  renewLease(slot: SlotRecord, until: number): void {
    if (slot.state !== SlotState.ALLOCATED || slot.leaseDeadlineMs === undefined) return;
    if (until <= slot.leaseDeadlineMs) return;
    slot.leaseDeadlineMs = until;
    this.leases.set(slot.slotId, until);
  }

  /** ALLOCATED → RUNNING; the lease no longer applies. */
  markRunning(slot: SlotRecord): void {
    if (slot.state !== SlotState.ALLOCATED)
      throw new Error(`SlotTable.markRunning: slot ${slot.slotId} is ${slot.state}`);
    slot.state = SlotState.RUNNING;
    slot.leaseDeadlineMs = undefined;
    this.leases.delete(slot.slotId);
    this.running++;
  }

  /** ALLOCATED|RUNNING → FREE. */
  release(slotId: string): SlotRecord {
    const slot = this.bySlot.get(slotId);
    if (slot === undefined) throw new Error(`SlotTable.release: unknown slot ${slotId}`);
    this.bySlot.delete(slotId);
    this.byTaskId.delete(slot.taskId);
    this.leases.delete(slotId);
    if (slot.state === SlotState.RUNNING) this.running--;
    return slot;
  }

  /** The earliest lease deadline of an ALLOCATED slot. */
  nextLeaseDeadline(): number | undefined {
    return this.leases.peek()?.at;
  }

  /** Pops the id of one ALLOCATED slot whose lease is due at `now` (its timer is disarmed). */
  popExpiredLease(now: number): string | undefined {
    return this.leases.popDue(now);
  }

  /** Whether a slot's lease timer is armed, and when (for invariant checks). */
  armedLease(slotId: string): number | undefined {
    return this.leases.get(slotId);
  }

  get armedLeaseCount(): number {
    return this.leases.size;
  }
}

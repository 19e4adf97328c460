// The slot table: the worker's single source of truth for capacity.
//
// A slot is FREE → ALLOCATED → RUNNING → FREE. FREE slots are not stored: the table holds only slots in
// use, and `free = capacity - inUse`. Every allocation gets a fresh id from the injected generator, so a
// stale slot id (from an expired reservation) can never match a later one. A slot is bound to exactly
// one task id for its whole life, and a task id holds at most one slot (`byTask`).
// ALLOCATED slots carry a lease deadline (armed in `leases`); RUNNING slots have none — a running task
// leaves only by converging.
//
// Each slot also records the client it was reserved for (docs/security.md § Reservations per client).
// A slot is *unsubmitted* while it is ALLOCATED and no task has been submitted on it; `unsubmitted`
// keeps those per client, in allocation order, so the admission rules can count a client's held
// reservations and reclaim its oldest one in O(1).

import { ANONYMOUS_CLIENT } from '../../../kernel/client-identity.js';
import { TimerTable } from './timer-table.js';

export const SlotState = { ALLOCATED: 'ALLOCATED', RUNNING: 'RUNNING' } as const;
export type SlotState = (typeof SlotState)[keyof typeof SlotState];

export interface SlotRecord {
  readonly slotId: string;
  readonly taskId: string;
  /** The client the slot was reserved for (`ANONYMOUS_CLIENT` when unknown). */
  readonly client: string;
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
  /** Unsubmitted ALLOCATED slot ids per client, oldest first (a Set keeps insertion order). */
  private readonly unsubmitted = new Map<string, Set<string>>();
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
  allocate(taskId: string, ttlMs: number, now: number, client: string = ANONYMOUS_CLIENT): SlotRecord {
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
      client,
      state: SlotState.ALLOCATED,
      ttlMs,
      allocatedAtMs: now,
      leaseDeadlineMs: now + ttlMs,
    };
    this.bySlot.set(slotId, slot);
    this.byTaskId.set(taskId, slot);
    this.leases.set(slotId, now + ttlMs);
    let held = this.unsubmitted.get(client);
    if (held === undefined) this.unsubmitted.set(client, (held = new Set()));
    held.add(slotId);
    return slot;
  }

  /** A task was submitted on this ALLOCATED slot: it no longer counts as its client's reservation. */
  markSubmitted(slot: SlotRecord): void {
    this.forgetUnsubmitted(slot);
  }

  /** Whether the slot is ALLOCATED with no task submitted on it yet. */
  isUnsubmitted(slot: SlotRecord): boolean {
    return this.unsubmitted.get(slot.client)?.has(slot.slotId) === true;
  }

  /** How many unsubmitted reservations `client` holds. */
  unsubmittedBy(client: string): number {
    return this.unsubmitted.get(client)?.size ?? 0;
  }

  /**
   * The client holding the most unsubmitted reservations (ties: the one whose oldest reservation is
   * oldest, i.e. the first in map order), with its count and oldest slot id; undefined when none.
   */
  largestReservationHolder(): { client: string; count: number; oldestSlotId: string } | undefined {
    let best: { client: string; count: number; oldestSlotId: string } | undefined;
    for (const [client, held] of this.unsubmitted) {
      if (best !== undefined && held.size <= best.count) continue;
      const oldestSlotId = held.values().next().value;
      if (oldestSlotId !== undefined) best = { client, count: held.size, oldestSlotId };
    }
    return best;
  }

  /** Clients with unsubmitted reservations and their counts (for invariant checks). */
  unsubmittedCounts(): Map<string, number> {
    return new Map([...this.unsubmitted].map(([client, held]) => [client, held.size]));
  }

  private forgetUnsubmitted(slot: SlotRecord): void {
    const held = this.unsubmitted.get(slot.client);
    if (held === undefined || !held.delete(slot.slotId)) return;
    if (held.size === 0) this.unsubmitted.delete(slot.client);
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
    this.forgetUnsubmitted(slot);
    this.running++;
  }

  /** ALLOCATED|RUNNING → FREE. */
  release(slotId: string): SlotRecord {
    const slot = this.bySlot.get(slotId);
    if (slot === undefined) throw new Error(`SlotTable.release: unknown slot ${slotId}`);
    this.bySlot.delete(slotId);
    this.byTaskId.delete(slot.taskId);
    this.leases.delete(slotId);
    this.forgetUnsubmitted(slot);
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

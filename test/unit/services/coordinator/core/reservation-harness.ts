// A harness for the ReservationMachine on virtual time (raft's data-driven tests, quinn's Pair): a core,
// a machine, a log of the commands it emitted, and counters of every claim and settlement per Worker, so a
// test can check that each claim is settled exactly once.
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import type { CoordinatorCoreConfig } from '../../../../../src/services/coordinator/core/config.js';
import type { ClaimResult } from '../../../../../src/services/coordinator/core/inputs.js';
import { ReservationMachine } from '../../../../../src/services/coordinator/core/reservation.js';
import type {
  RequestSlotsCommand,
  ReservationEvent,
  ReservationInput,
  ReserveResult,
  SlotAnswer,
} from '../../../../../src/services/coordinator/core/reservation-types.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';
import { hb } from './fixtures.js';

export const T0 = 1_000;

/** An input without its `now` (the rig supplies virtual time). */
export type Untimed<T> = T extends unknown ? Omit<T, 'now'> : never;

/** A Worker with `slots` free slots, healthy, heartbeat at T0. */
export const idle = (workerAddr: string, slots = 4, over: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat =>
  hb(workerAddr, { taskSlots: slots, lastHeartbeatMs: T0, ...over });

export const GRANT = (slotId: string, state = 'TASK_STATE_ALLOCATED'): SlotAnswer => ({
  type: 'granted',
  slotId,
  state,
});
export const NO_SLOT: SlotAnswer = {
  type: 'rejected',
  code: 'NoSlot',
  kind: 'rejected',
  reason: 'pool full',
};
export const INVALID_SLOT: SlotAnswer = {
  type: 'rejected',
  code: 'InvalidSlot',
  kind: 'rejected',
  reason: 'slot refused',
};
export const REFUSED: SlotAnswer = {
  type: 'rejected',
  code: 'Unavailable',
  kind: 'transport',
  reason: 'connect ECONNREFUSED',
};
export const UNCERTAIN: SlotAnswer = { type: 'uncertain', reason: 'Deadline exceeded' };
export const EMPTY_SLOT: SlotAnswer = GRANT('');

export class Rig {
  readonly core: CoordinatorCore;
  readonly machine: ReservationMachine;
  now = T0;
  /** Every command, in emission order. */
  readonly sent: RequestSlotsCommand[] = [];
  /** Commands not answered yet, by request id. */
  readonly open = new Map<number, RequestSlotsCommand>();
  readonly events: ReservationEvent[] = [];
  readonly claims = new Map<string, number>();
  readonly settled = new Map<string, ClaimResult[]>();

  constructor(
    workers: readonly WorkerHeartbeat[],
    taskIds: readonly string[],
    opts: { core?: Partial<CoordinatorCoreConfig>; maxTimeoutRetries?: number; ready?: boolean } = {},
  ) {
    this.core = new CoordinatorCore({ ...DEFAULT_COORDINATOR_CORE_CONFIG, ...opts.core });
    if (opts.ready !== false) this.core.applyFullWorkerList(workers, T0);
    // Count claims and settlements per Worker (the core clamps a stray settle at zero, so count here).
    const claim = this.core.claimCandidate.bind(this.core);
    this.core.claimCandidate = (taskId, exclude, now) => {
      const r = claim(taskId, exclude, now);
      if (r.ok) this.claims.set(r.workerAddr, (this.claims.get(r.workerAddr) ?? 0) + 1);
      return r;
    };
    const settle = this.core.settleClaim.bind(this.core);
    this.core.settleClaim = (workerAddr, result, now) => {
      this.settled.set(workerAddr, [...(this.settled.get(workerAddr) ?? []), result]);
      settle(workerAddr, result, now);
    };
    this.machine = new ReservationMachine(this.core, taskIds, {
      maxTimeoutRetries: opts.maxTimeoutRetries ?? 1,
    });
  }

  /** Feeds one input at the next virtual millisecond; returns the commands it produced. */
  feed(input: Untimed<ReservationInput>): RequestSlotsCommand[] {
    this.now += 1;
    const step = this.machine.apply({ ...input, now: this.now });
    for (const c of step.commands) {
      this.sent.push(c);
      this.open.set(c.requestId, c);
    }
    this.events.push(...step.events);
    return [...step.commands];
  }

  start(): RequestSlotsCommand[] {
    return this.feed({ type: 'start' });
  }

  /** Answers request `cmd` with `answer(taskId, cmd)` per id. */
  answer(cmd: RequestSlotsCommand, answer: (taskId: string, cmd: RequestSlotsCommand) => SlotAnswer) {
    this.open.delete(cmd.requestId);
    return this.feed({
      type: 'answered',
      requestId: cmd.requestId,
      answers: cmd.taskIds.map((id) => answer(id, cmd)),
    });
  }

  /** Fails request `cmd` as a whole. */
  fail(cmd: RequestSlotsCommand, answer: SlotAnswer) {
    this.open.delete(cmd.requestId);
    return this.feed({ type: 'callFailed', requestId: cmd.requestId, answer });
  }

  /** Answers every open request with `world`, oldest first, until the machine is done. */
  runToEnd(world: (taskId: string, cmd: RequestSlotsCommand) => SlotAnswer, maxSteps = 10_000): void {
    for (let i = 0; i < maxSteps && this.open.size > 0; i++) {
      const [, cmd] = this.open.entries().next().value as [number, RequestSlotsCommand];
      this.answer(cmd, world);
    }
    if (!this.machine.done) throw new Error('machine not done');
  }

  results(): ReserveResult[] {
    return this.machine.results();
  }

  /** `workerAddr` or the error code of each result. */
  outcomes(): string[] {
    return this.results().map((r) => (r.ok ? r.workerAddr : `!${r.error.code}`));
  }

  worker(addr: string) {
    return this.core.getWorker(addr)!;
  }

  /** Claims made minus settlements, per Worker: 0 everywhere once every claim is settled once. */
  unsettled(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const addr of new Set([...this.claims.keys(), ...this.settled.keys()])) {
      out[addr] = (this.claims.get(addr) ?? 0) - (this.settled.get(addr)?.length ?? 0);
    }
    return out;
  }

  /** [workerAddr, taskIds, attempt] of every command. */
  trace(): [string, string[], number][] {
    return this.sent.map((c) => [c.workerAddr, [...c.taskIds], c.attempt]);
  }
}

// Fakes and builders for the coordinator adapter tests.
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import type { CoordinatorCoreConfig } from '../../../../../src/services/coordinator/core/config.js';
import { SlotError } from '../../../../../src/services/coordinator/adapters/slot-reserver.js';
import type {
  SlotReply,
  SlotRequest,
  SlotRequestOptions,
  SlotReserver,
} from '../../../../../src/services/coordinator/adapters/slot-reserver.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';
import { grpcErrToSlotError } from '../../../../../src/services/coordinator/adapters/worker-rpc-client.js';
import { workerCodeToGRPC } from '../../../../../src/services/worker/adapters/grpc/error-status.js';
import { WorkerAdmissionError } from '../../../../../src/services/worker/core/errors.js';

export const NOW = 50_000;

/** A healthy idle Worker; `taskSlots` sets its free capacity, and so its rank (more free = first). */
export function hb(workerAddr: string, taskSlots = 4, over: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat {
  return {
    workerAddr,
    taskSlots,
    reservedSlots: 0,
    runningTasks: 0,
    cpuPercent: 0.1,
    memoryPercent: 0.2,
    memoryAvailableBytes: 8_000_000_000,
    memoryTotalBytes: 16_000_000_000,
    processRssBytes: 100_000_000,
    errorRate: 0,
    lastHeartbeatMs: NOW,
    ...over,
  };
}

export function readyCore(
  workers: readonly WorkerHeartbeat[],
  config: Partial<CoordinatorCoreConfig> = {},
): CoordinatorCore {
  const core = new CoordinatorCore({ ...DEFAULT_COORDINATOR_CORE_CONFIG, ...config });
  core.applyFullWorkerList(workers, NOW);
  return core;
}

/** What one scripted RequestTaskSlot does. */
export type Step =
  | 'ok'
  | 'emptySlot'
  | 'retained'
  | 'noSlot'
  | 'invalidSlot'
  | 'workerUnavailable'
  /** The Worker's own Unavailable answers, through its status mapping and ours. */
  | 'executorRestarting'
  | 'draining'
  | 'transport'
  | 'uncertain';

export interface FakeCall {
  readonly workerAddr: string;
  readonly taskId: string;
  readonly ttlMs: number;
  readonly timeoutMs: number;
}

/** A SlotReserver that plays a script per Worker (default 'ok' once the script runs out). */
export class FakeReserver implements SlotReserver {
  readonly calls: FakeCall[] = [];
  private readonly script: Map<string, Step[]>;

  constructor(script: Record<string, Step[]> = {}) {
    this.script = new Map(Object.entries(script).map(([k, v]) => [k, [...v]]));
  }

  get contacted(): string[] {
    return this.calls.map((c) => c.workerAddr);
  }

  async requestTaskSlot(workerAddr: string, req: SlotRequest, opts: SlotRequestOptions): Promise<SlotReply> {
    this.calls.push({ workerAddr, taskId: req.taskId, ttlMs: req.ttlMs, timeoutMs: opts.timeoutMs });
    const step = this.script.get(workerAddr)?.shift() ?? 'ok';
    return reply(step, workerAddr, req.taskId, this.calls.length);
  }
}

export function reply(step: Step, workerAddr: string, taskId: string, n = 1): SlotReply {
  switch (step) {
    case 'ok':
      return {
        ok: true,
        grant: { taskId, slotId: `slot-${workerAddr}-${n}`, state: 'TASK_STATE_ALLOCATED' },
      };
    case 'emptySlot':
      return { ok: true, grant: { taskId, slotId: '', state: 'TASK_STATE_ALLOCATED' } };
    case 'retained':
      return { ok: true, grant: { taskId, slotId: '', state: 'TASK_STATE_SUCCEEDED' } };
    case 'noSlot':
      return { ok: false, error: new SlotError('NoSlot', 'rejected', 'pool full') };
    case 'invalidSlot':
      return { ok: false, error: new SlotError('InvalidSlot', 'rejected', 'slot refused') };
    case 'workerUnavailable':
      return { ok: false, error: new SlotError('Unavailable', 'rejected', 'worker draining') };
    case 'executorRestarting':
    case 'draining': {
      const reason = step === 'draining' ? 'Draining' : 'NotReady';
      const wire = workerCodeToGRPC(WorkerAdmissionError.unavailable(taskId, reason));
      return { ok: false, error: grpcErrToSlotError(wire) };
    }
    case 'transport':
      return { ok: false, error: new SlotError('Unavailable', 'transport', 'connect ECONNREFUSED') };
    case 'uncertain':
      return { ok: false, error: new SlotError('SlotUncertain', 'uncertain', 'Deadline exceeded') };
    default: {
      const _exhaustive: never = step;
      throw new Error(`unknown step ${String(_exhaustive)}`);
    }
  }
}

// Reservations in bulk (docs/batched-protocol.md § Client): `reserve(taskId)` calls made in the same turn
// of the event loop are sent as one ReserveWorkerSlots call (at most MAX_IDS_PER_CALL ids; at most
// MAX_CALLS_IN_FLIGHT calls at once, the rest wait), and each caller gets its own task's answer: a
// reservation, or the error ReserveWorkerSlot would have raised for it. A Coordinator without the bulk
// RPC (UNIMPLEMENTED) is served from then on with one unary ReserveWorkerSlot per id.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { unaryCall } from '../../grpc/clients.js';
import type { CoordinatorServiceClient } from '../../grpc/proto.js';
import type {
  ReserveWorkerSlotResponseWireOut,
  ReserveWorkerSlotsResponseWireOut,
  WorkerSlotReservationWireOut,
} from '../../grpc/wire-types.js';
import { toClientError } from '../errors.js';
import type { Reservation } from '../reserve.js';
import { refusal, type Failure } from './refusal.js';

export const MAX_IDS_PER_CALL = 1_000;
export const MAX_CALLS_IN_FLIGHT = 4;

interface Waiter {
  readonly taskId: string;
  readonly resolve: (r: Reservation) => void;
  readonly reject: (e: Failure) => void;
}

export interface BulkReserverOptions {
  readonly address: string;
  readonly stub: () => Pick<CoordinatorServiceClient, 'reserveWorkerSlots' | 'reserveWorkerSlot'>;
  readonly rpcTimeoutMs: number;
  readonly signal: AbortSignal;
}

export class BulkReserver {
  private waiting: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;
  private unary = false;

  constructor(private readonly opts: BulkReserverOptions) {}

  /**
   * Rejects with the task's own refusal, or the call's BlockxClientError (rpc 'ReserveWorkerSlots', or
   * 'ReserveWorkerSlot' after the fallback).
   */
  reserve(taskId: string): Promise<Reservation> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ taskId, resolve, reject });
      this.schedule();
    });
  }

  /** Reservations asked for and not yet answered. */
  get pending(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.inFlight < MAX_CALLS_IN_FLIGHT) {
      const batch = this.waiting.splice(0, MAX_IDS_PER_CALL);
      this.inFlight++;
      const done = (): void => {
        this.inFlight--;
        if (this.waiting.length > 0) this.schedule();
      };
      (this.unary ? this.sendUnary(batch) : this.sendBulk(batch)).then(done, done);
    }
  }

  private async sendBulk(batch: Waiter[]): Promise<void> {
    const { address } = this.opts;
    const taskIds = [...new Set(batch.map((w) => w.taskId))];
    const stub = this.opts.stub();
    let res: ReserveWorkerSlotsResponseWireOut;
    try {
      res = await unaryCall<ReserveWorkerSlotsResponseWireOut>(
        (md, o, cb) => stub.reserveWorkerSlots({ taskIds }, md, o, cb),
        { timeoutMs: this.opts.rpcTimeoutMs, signal: this.opts.signal },
      );
    } catch (err) {
      const error = toClientError(err, { rpc: 'ReserveWorkerSlots', address });
      if (error.grpcStatus === GrpcStatus.UNIMPLEMENTED) {
        this.unary = true;
        return this.sendUnary(batch);
      }
      for (const w of batch) w.reject(error.with({ taskId: w.taskId }));
      return;
    }
    const byId = new Map<string, WorkerSlotReservationWireOut>();
    for (const r of res.reservations) byId.set(r.taskId, r);
    for (const w of batch) {
      const r = byId.get(w.taskId);
      if (r === undefined) {
        const message = `no answer for task ${w.taskId}`;
        w.reject(refusal(GrpcStatus.INTERNAL, '', message, 'ReserveWorkerSlots', address));
      } else if (r.error !== null && r.error !== undefined) {
        w.reject(refusal(r.error.status, r.error.code, r.error.message, 'ReserveWorkerSlots', address));
      } else {
        w.resolve({ workerAddr: r.workerAddr, slotId: r.slotId });
      }
    }
  }

  private async sendUnary(batch: Waiter[]): Promise<void> {
    const { address } = this.opts;
    const stub = this.opts.stub();
    await Promise.all(
      batch.map((w) =>
        unaryCall<ReserveWorkerSlotResponseWireOut>(
          (md, o, cb) => stub.reserveWorkerSlot({ taskId: w.taskId }, md, o, cb),
          { timeoutMs: this.opts.rpcTimeoutMs, signal: this.opts.signal },
        ).then(
          (r) => w.resolve({ workerAddr: r.workerAddr, slotId: r.slotId }),
          (err: unknown) =>
            w.reject(toClientError(err, { rpc: 'ReserveWorkerSlot', address, taskId: w.taskId })),
        ),
      ),
    );
  }
}

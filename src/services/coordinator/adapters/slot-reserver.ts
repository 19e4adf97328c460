// The port between the reservation orchestration (coordinator-server.ts) and the Workers: one
// `RequestTaskSlot` on one Worker, or one `RequestTaskSlots` for many ids (docs/batched-protocol.md).
// WorkerRpcClient (worker-rpc-client.ts) is the gRPC implementation; tests use a fake. The orchestration
// never sees gRPC: it sees a reply or a classified SlotError per id.

import type { CancelSignal } from '../../../kernel/cancel.js';
import { BlockxError } from '../../../kernel/errors.js';
import type { CoordinatorErrorCode } from '../core/errors.js';
import type { CapacityReport } from '../core/inputs.js';

export interface SlotRequest {
  readonly taskId: string;
  /** The reservation window the Worker should hold the slot for (COORDINATOR_SLOT_TTL_MS). */
  readonly ttlMs: number;
}

export interface SlotRequestOptions {
  /** Deadline of this one call (COORDINATOR_WORKER_RPC_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** Aborted when the Client that asked for the reservation went away. */
  readonly signal?: CancelSignal;
  /**
   * The identity of the Client the reservation is for (src/grpc/peer-identity.ts), forwarded to the
   * Worker for its per-client reservation rules (docs/security.md § Reservations per client).
   */
  readonly client?: string;
}

/** What the Worker said. An empty `slotId` is possible on the wire and counts as uncertain. */
export interface SlotGrant {
  readonly taskId: string;
  readonly slotId: string;
  readonly state: string;
}

/**
 * One id's outcome. `capacity`: the Worker's slot counts read after every grant of the call that produced
 * this reply (the same report on every reply of one RequestTaskSlots), when the Worker sent them
 * (docs/placement.md § Capacity from the Workers' answers).
 */
export type SlotReply = (
  { readonly ok: true; readonly grant: SlotGrant } | { readonly ok: false; readonly error: SlotError }
) & { readonly capacity?: CapacityReport };

export interface SlotsRequest {
  /** Distinct task ids, at most MAX_BATCH_TASKS. */
  readonly taskIds: readonly string[];
  readonly ttlMs: number;
}

export interface SlotReserver {
  requestTaskSlot(workerAddr: string, req: SlotRequest, opts: SlotRequestOptions): Promise<SlotReply>;
  /**
   * RequestTaskSlots: one reply per id of `req.taskIds`, in its order. A failure of the call as a whole
   * is that failure for every id (classified as for one RequestTaskSlot). Optional: without it the
   * orchestration sends one RequestTaskSlot per id (`requestSlotsOneByOne`).
   */
  requestTaskSlots?(workerAddr: string, req: SlotsRequest, opts: SlotRequestOptions): Promise<SlotReply[]>;
}

/** How many RequestTaskSlot calls `requestSlotsOneByOne` keeps in flight to one Worker. */
export const ONE_BY_ONE_CONCURRENCY = 64;

/**
 * RequestTaskSlots as unary RequestTaskSlot calls, at most `concurrency` at a time: for a Worker that
 * predates the batched RPC (it answers UNIMPLEMENTED), or a SlotReserver without `requestTaskSlots`.
 */
export async function requestSlotsOneByOne(
  reserver: Pick<SlotReserver, 'requestTaskSlot'>,
  workerAddr: string,
  req: SlotsRequest,
  opts: SlotRequestOptions,
  concurrency = ONE_BY_ONE_CONCURRENCY,
): Promise<SlotReply[]> {
  const { taskIds, ttlMs } = req;
  const replies = new Array<SlotReply>(taskIds.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < taskIds.length) {
      const i = next++;
      // Each call's report counts only that call's grant, not the others of the batch: dropped.
      const { capacity: _partial, ...reply } = await reserver.requestTaskSlot(
        workerAddr,
        { taskId: taskIds[i]!, ttlMs },
        opts,
      );
      replies[i] = reply;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, taskIds.length) }, lane));
  return replies;
}

/** The business codes a RequestTaskSlot failure can carry (a subset of the Coordinator's codes). */
export type SlotErrorCode = Extract<
  CoordinatorErrorCode,
  'InvalidArgument' | 'NoSlot' | 'InvalidSlot' | 'NotFound' | 'Unavailable' | 'SlotUncertain' | 'Internal'
>;

/**
 * How the failure came about:
 *  - `rejected`: the Worker answered and refused (nothing was reserved);
 *  - `transport`: the request never reached the Worker (connection refused, no route): nothing reserved;
 *  - `uncertain`: the request may have reached the Worker and a slot may exist (timeout, dropped
 *    connection, cancel, internal error, or a success without a slot id).
 */
export type SlotFailureKind = 'rejected' | 'transport' | 'uncertain';

/** A classified RequestTaskSlot failure: a code, a message, and whether a slot may have been allocated. */
export class SlotError extends BlockxError {
  declare readonly code: SlotErrorCode;
  readonly kind: SlotFailureKind;
  /** The gRPC status code, when the failure was a gRPC status. */
  readonly grpcCode: number | undefined;

  constructor(
    code: SlotErrorCode,
    kind: SlotFailureKind,
    message: string,
    fields?: { grpcCode?: number; cause?: unknown },
  ) {
    super(code, message, fields?.cause === undefined ? undefined : { cause: fields.cause });
    this.kind = kind;
    this.grpcCode = fields?.grpcCode;
  }

  /** True when the request may have reached the Worker: retries must stay on the same Worker. */
  get mayHaveAllocated(): boolean {
    return this.kind === 'uncertain';
  }
}

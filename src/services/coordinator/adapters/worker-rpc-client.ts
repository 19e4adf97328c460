// WorkerRpcClient: the gRPC SlotReserver. It sends RequestTaskSlot (or RequestTaskSlots for many ids,
// docs/batched-protocol.md) to a Worker and classifies every failure with `grpcErrToSlotError`, which
// decides whether a slot MAY have been allocated — the one question the orchestration needs answered
// (docs/coordinator.md § ReserveWorkerSlot, step 3). A per-id refusal inside RequestTaskSlots carries the
// status and business code the unary call would have returned, and is classified by the same function
// (`slotErrorOfStatus`). A Worker that answers RequestTaskSlots with UNIMPLEMENTED predates it: its ids
// go out as unary calls, and the batched RPC is not tried on it again for BATCH_RETRY_AFTER_MS.
//
// Channels: exactly one grpc-js client (one channel, its own subchannel) per Worker address, created on
// first use. A point-to-point client needs no balancer. Channels of Workers that left the registry are
// closed (`forget`), and a sweep closes channels idle for longer than `idleCloseMs`.

import { type ServiceLogger, silentLogger } from '../../../kernel/observability/service-logger.js';
import * as grpc from '@grpc/grpc-js';
import { CLIENT_CHANNEL_OPTIONS } from '../../../grpc/channel-options.js';
import { channelCredentials } from '../../../grpc/tls.js';
import { createWorkerClient, unaryCall, type UnaryCallOptions } from '../../../grpc/clients.js';
import { CLIENT_IDENTITY_METADATA_KEY } from '../../../kernel/client-identity.js';
import type { TlsMaterial } from '../../../kernel/tls-files.js';
import { WorkerAdminServiceClient, type WorkerServiceClient } from '../../../grpc/proto.js';
import type { ListRecentTasksResponse__Output } from '../../../generated/proto/blockx/worker/v1/ListRecentTasksResponse.js';
import { businessCodeOf, isServiceError } from '../../../grpc/status.js';
import type {
  RequestTaskSlotResponseWireOut,
  RequestTaskSlotsResponseWireOut,
  SlotGrantWireOut,
  WorkerCapacityWireOut,
} from '../../../grpc/wire-types.js';
import { MAX_HEARTBEAT_SLOTS } from '../../../contracts/heartbeat.js';
import { capacityReportProblem } from '../core/index.js';
import type { CapacityReport } from '../core/index.js';
import { describeError } from '../../registry/registry-port.js';
import { SlotError, requestSlotsOneByOne } from './slot-reserver.js';
import type {
  SlotErrorCode,
  SlotReply,
  SlotRequest,
  SlotRequestOptions,
  SlotReserver,
  SlotsRequest,
} from './slot-reserver.js';

/**
 * UNAVAILABLE details that prove the request never left this process: the channel had no connection
 * (refused, unresolvable, unreachable) or the server refused the HTTP/2 stream before reading it.
 * Anything else UNAVAILABLE (a dropped connection, ECONNRESET, ETIMEDOUT) may have reached the Worker.
 */
const NOT_SENT =
  /No connection established|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|Name resolution failed|Stream refused by server/i;

/**
 * The text of a Worker's Unavailable whose Executor is starting or restarting (WorkerAdmissionError
 * `NotReady`; test/unit/services/coordinator/adapters/error-mapping.test.ts pins it against the Worker's
 * own mapping). Such a Worker is busy for a moment, not failing (docs/coordinator.md § Penalties and the
 * circuit breaker).
 */
const WORKER_NOT_READY = /worker is not ready/;

/** A failure status, from a gRPC error or from a per-id TaskError of RequestTaskSlots. */
interface FailureStatus {
  readonly code: number;
  readonly details: string;
  /** The `blockx-error-code` the Worker sent, or undefined. */
  readonly businessCode: string | undefined;
  readonly cause?: unknown;
}

function rejected(code: SlotErrorCode, st: FailureStatus): SlotError {
  return new SlotError(code, 'rejected', st.details, { grpcCode: st.code, cause: st.cause });
}

function uncertain(st: FailureStatus): SlotError {
  return new SlotError('SlotUncertain', 'uncertain', st.details, { grpcCode: st.code, cause: st.cause });
}

/**
 * Classifies a RequestTaskSlot failure. The inverse of the Worker's (and `coordCodeToGRPC`'s) mapping:
 *   INVALID_ARGUMENT → InvalidArgument, RESOURCE_EXHAUSTED → NoSlot, FAILED_PRECONDITION → InvalidSlot,
 *   NOT_FOUND → NotFound, ALREADY_EXISTS (another client's task id) → NoSlot, UNAVAILABLE sent by the
 *   Worker (it carries a business code) → Unavailable, or NoSlot when its Executor is (re)starting:
 *   explicit rejections, nothing allocated.
 *   UNAVAILABLE before the request left (connection refused, ...) → Unavailable, kind `transport`.
 *   DEADLINE_EXCEEDED, CANCELLED, ABORTED, INTERNAL, UNKNOWN, any other UNAVAILABLE (timeout-style: a
 *   dropped connection) and codes a Worker never sends → SlotUncertain: MayHaveAllocated.
 *   UNIMPLEMENTED, PERMISSION_DENIED, UNAUTHENTICATED: refused before any handler ran → Internal, rejected.
 * A non-gRPC error can only come from building the call, before anything was sent → transport.
 */
export function grpcErrToSlotError(err: unknown): SlotError {
  if (!isServiceError(err)) {
    return new SlotError('Internal', 'transport', `request not sent: ${describeError(err)}`, { cause: err });
  }
  return slotErrorOfStatus({
    code: err.code,
    details: err.details || err.message,
    businessCode: businessCodeOf(err),
    cause: err,
  });
}

/** `grpcErrToSlotError` on a status given by its parts (a RequestTaskSlots TaskError is one). */
export function slotErrorOfStatus(st: FailureStatus): SlotError {
  switch (st.code) {
    case grpc.status.INVALID_ARGUMENT:
      return rejected('InvalidArgument', st);
    case grpc.status.RESOURCE_EXHAUSTED:
      return rejected('NoSlot', st);
    case grpc.status.FAILED_PRECONDITION:
      return rejected('InvalidSlot', st);
    case grpc.status.NOT_FOUND:
      return rejected('NotFound', st);
    case grpc.status.ALREADY_EXISTS:
      // The task id is another client's on that Worker (TaskIdTaken, docs/security.md § Roles): like a
      // full Worker, not a failing one (no breaker count); the client's task goes to another Worker, or
      // the reservation fails as for a full cluster. It never gets the other client's task.
      return rejected('NoSlot', st);
    case grpc.status.UNAVAILABLE:
      if (st.businessCode !== undefined && st.businessCode !== '') {
        // An Executor restart takes the Worker out for its restart backoff (up to a few seconds): like a
        // full pool, backpressure, so the breaker does not hold the Worker out long after it is back.
        // A draining Worker stays a rejection: it is going away.
        return rejected(WORKER_NOT_READY.test(st.details) ? 'NoSlot' : 'Unavailable', st);
      }
      if (NOT_SENT.test(st.details)) {
        return new SlotError('Unavailable', 'transport', st.details, { grpcCode: st.code, cause: st.cause });
      }
      return uncertain(st);
    case grpc.status.UNIMPLEMENTED:
    case grpc.status.PERMISSION_DENIED:
    case grpc.status.UNAUTHENTICATED:
      return rejected('Internal', st);
    default:
      // DEADLINE_EXCEEDED, CANCELLED, ABORTED, INTERNAL, UNKNOWN and anything unexpected.
      return uncertain(st);
  }
}

/**
 * The per-id replies of one RequestTaskSlots answer. The proto promises one grant per requested id, in
 * request order; a grant missing, or naming another task id, is an uncertain outcome for that id (the
 * Worker may have reserved it), never a success.
 */
export function repliesOfGrants(
  taskIds: readonly string[],
  grants: readonly SlotGrantWireOut[],
): SlotReply[] {
  const replies = new Array<SlotReply>(taskIds.length);
  for (let i = 0; i < taskIds.length; i++) {
    const taskId = taskIds[i]!;
    const g = grants[i];
    if (g === undefined || (g.taskId !== '' && g.taskId !== taskId)) {
      const why =
        g === undefined
          ? `worker answered ${grants.length} grants for ${taskIds.length} task ids`
          : 'worker answered a grant for another task id';
      replies[i] = { ok: false, error: new SlotError('SlotUncertain', 'uncertain', why) };
    } else if (g.error !== null && g.error !== undefined) {
      const { status, message, code } = g.error;
      replies[i] = {
        ok: false,
        error: slotErrorOfStatus({ code: status, details: message, businessCode: code }),
      };
    } else {
      replies[i] = { ok: true, grant: { taskId, slotId: g.slotId, state: String(g.state) } };
    }
  }
  return replies;
}

/**
 * The capacity report of a RequestTaskSlot(s) answer (docs/placement.md § Capacity from the Workers'
 * answers), or undefined when the Worker sent none (an older Worker) or sent counts the core would refuse
 * (the answer itself still counts; only the report is dropped).
 */
export function capacityOfWire(wire: WorkerCapacityWireOut | null | undefined): CapacityReport | undefined {
  if (wire === null || wire === undefined) return undefined;
  const report: CapacityReport = {
    taskSlots: wire.taskSlots,
    reservedSlots: wire.reservedSlots,
    runningTasks: wire.runningTasks,
    reclaimableSlots: Math.min(wire.reclaimableSlots, wire.reservedSlots),
    takenAtMs: Number(wire.takenAtMs),
  };
  const bad =
    capacityReportProblem(report) !== undefined ||
    report.taskSlots > MAX_HEARTBEAT_SLOTS ||
    report.takenAtMs <= 0;
  return bad ? undefined : report;
}

function withCapacity(reply: SlotReply, capacity: CapacityReport | undefined): SlotReply {
  return capacity === undefined ? reply : { ...reply, capacity };
}

interface Channel {
  readonly client: WorkerServiceClient;
  /** WorkerAdminService on the same channel (the dashboard feed), created on first use. */
  admin: WorkerAdminServiceClient | undefined;
  inFlight: number;
  lastUsedMs: number;
  forgotten: boolean;
  /** Until then (Date.now ms) this Worker gets unary calls: it answered RequestTaskSlots UNIMPLEMENTED. */
  batchUnsupportedUntilMs: number;
}

export interface WorkerRpcClientOptions {
  /** Close a channel unused for this long (default 5 min). */
  readonly idleCloseMs?: number;
  readonly channelOptions?: grpc.ChannelOptions;
  readonly logger?: ServiceLogger;
  /**
   * Mutual TLS to every Worker: the Worker's certificate must be signed by the cluster CA and name the
   * address it advertised (docs/security.md § TLS and authentication). Omitted: plaintext.
   */
  readonly tls?: TlsMaterial;
}

export const DEFAULT_IDLE_CLOSE_MS = 5 * 60_000;

/** After an UNIMPLEMENTED RequestTaskSlots, how long a Worker is sent unary calls before a new probe. */
export const BATCH_RETRY_AFTER_MS = 60_000;

/**
 * The unary-call options of one slot request: its deadline, its cancellation, and the identity of the
 * client it is made for, forwarded in `blockx-client` (docs/security.md § Reservations per client).
 */
function callOptionsOf(opts: SlotRequestOptions): UnaryCallOptions {
  if (opts.client === undefined) return { timeoutMs: opts.timeoutMs, signal: opts.signal };
  const metadata = new grpc.Metadata();
  metadata.set(CLIENT_IDENTITY_METADATA_KEY, opts.client);
  return { timeoutMs: opts.timeoutMs, signal: opts.signal, metadata };
}

/** Worker channels reconnect fast: a restarted Worker is routable again within about a second. */
const WORKER_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  ...CLIENT_CHANNEL_OPTIONS,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
  'grpc.use_local_subchannel_pool': 1,
};

export class WorkerRpcClient implements SlotReserver {
  private readonly channels = new Map<string, Channel>();
  private readonly idleCloseMs: number;
  private readonly channelOptions: grpc.ChannelOptions;
  private readonly tls: TlsMaterial | undefined;
  private readonly logger: ServiceLogger;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(opts: WorkerRpcClientOptions = {}) {
    this.idleCloseMs = opts.idleCloseMs ?? DEFAULT_IDLE_CLOSE_MS;
    this.channelOptions = { ...WORKER_CHANNEL_OPTIONS, ...opts.channelOptions };
    this.tls = opts.tls;
    this.logger = opts.logger ?? silentLogger;
    this.sweeper = setInterval(() => this.sweepIdle(), Math.max(1_000, Math.floor(this.idleCloseMs / 2)));
    this.sweeper.unref();
  }

  async requestTaskSlot(workerAddr: string, req: SlotRequest, opts: SlotRequestOptions): Promise<SlotReply> {
    let channel: Channel;
    try {
      channel = this.channel(workerAddr);
    } catch (err) {
      return { ok: false, error: grpcErrToSlotError(err) };
    }
    channel.inFlight += 1;
    try {
      const res = await unaryCall<RequestTaskSlotResponseWireOut>(
        (md, o, cb) => channel.client.requestTaskSlot({ taskId: req.taskId, ttlMs: req.ttlMs }, md, o, cb),
        callOptionsOf(opts),
      );
      const grant = { taskId: res.taskId, slotId: res.slotId, state: String(res.state) };
      return withCapacity({ ok: true, grant }, capacityOfWire(res.capacity));
    } catch (err) {
      return { ok: false, error: grpcErrToSlotError(err) };
    } finally {
      channel.inFlight -= 1;
      channel.lastUsedMs = Date.now();
      if (channel.forgotten && channel.inFlight === 0) channel.client.close();
    }
  }

  async requestTaskSlots(
    workerAddr: string,
    req: SlotsRequest,
    opts: SlotRequestOptions,
  ): Promise<SlotReply[]> {
    let channel: Channel;
    try {
      channel = this.channel(workerAddr);
    } catch (err) {
      const error = grpcErrToSlotError(err);
      return req.taskIds.map(() => ({ ok: false, error }));
    }
    if (channel.batchUnsupportedUntilMs > Date.now())
      return requestSlotsOneByOne(this, workerAddr, req, opts);
    channel.inFlight += 1;
    try {
      const res = await unaryCall<RequestTaskSlotsResponseWireOut>(
        (md, o, cb) =>
          channel.client.requestTaskSlots({ taskIds: [...req.taskIds], ttlMs: req.ttlMs }, md, o, cb),
        callOptionsOf(opts),
      );
      const capacity = capacityOfWire(res.capacity);
      return repliesOfGrants(req.taskIds, res.grants).map((r) => withCapacity(r, capacity));
    } catch (err) {
      // UNIMPLEMENTED: no handler ran, nothing was reserved; an older Worker gets one call per id (below).
      if (!isServiceError(err) || err.code !== grpc.status.UNIMPLEMENTED) {
        const error = grpcErrToSlotError(err);
        return req.taskIds.map(() => ({ ok: false, error }));
      }
    } finally {
      channel.inFlight -= 1;
      channel.lastUsedMs = Date.now();
      if (channel.forgotten && channel.inFlight === 0) channel.client.close();
    }
    channel.batchUnsupportedUntilMs = Date.now() + BATCH_RETRY_AFTER_MS;
    this.logger.debug(
      { workerAddr, task_ids: req.taskIds.length },
      'worker does not implement RequestTaskSlots; falling back to RequestTaskSlot per id',
    );
    return requestSlotsOneByOne(this, workerAddr, req, opts);
  }

  /**
   * WorkerAdminService.ListRecentTasks on the Worker's channel (the dashboard feed,
   * docs/dashboard-data.md). Rejects with the gRPC error (UNIMPLEMENTED from a Worker that predates it).
   */
  async listRecentTasks(
    workerAddr: string,
    req: { readonly afterSeq: number; readonly limit: number },
    opts: { readonly timeoutMs: number },
  ): Promise<ListRecentTasksResponse__Output> {
    const channel = this.channel(workerAddr);
    // The admin stub shares the WorkerService stub's channel: no second connection per Worker.
    channel.admin ??= new WorkerAdminServiceClient(workerAddr, channelCredentials(this.tls), {
      channelOverride: channel.client.getChannel(),
    });
    const admin = channel.admin;
    channel.inFlight += 1;
    try {
      return await unaryCall<ListRecentTasksResponse__Output>(
        (md, o, cb) => admin.listRecentTasks({ afterSeq: req.afterSeq, limit: req.limit }, md, o, cb),
        { timeoutMs: opts.timeoutMs },
      );
    } finally {
      channel.inFlight -= 1;
      channel.lastUsedMs = Date.now();
      if (channel.forgotten && channel.inFlight === 0) channel.client.close();
    }
  }

  /** The Worker left the registry: close its channel (after calls in flight finish). */
  forget(workerAddr: string): void {
    const channel = this.channels.get(workerAddr);
    if (channel === undefined) return;
    this.channels.delete(workerAddr);
    channel.forgotten = true;
    if (channel.inFlight === 0) channel.client.close();
  }

  /** Open channels, for diagnostics and tests. */
  get channelCount(): number {
    return this.channels.size;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    for (const addr of [...this.channels.keys()]) this.forget(addr);
  }

  private channel(workerAddr: string): Channel {
    if (this.closed) throw new Error('WorkerRpcClient is closed');
    let channel = this.channels.get(workerAddr);
    if (channel === undefined) {
      const client = createWorkerClient(workerAddr, this.channelOptions, this.tls);
      channel = {
        client,
        admin: undefined,
        inFlight: 0,
        lastUsedMs: Date.now(),
        forgotten: false,
        batchUnsupportedUntilMs: 0,
      };
      this.channels.set(workerAddr, channel);
    }
    return channel;
  }

  private sweepIdle(): void {
    const cutoff = Date.now() - this.idleCloseMs;
    for (const [addr, channel] of this.channels) {
      if (channel.inFlight === 0 && channel.lastUsedMs < cutoff) {
        this.logger.debug({ workerAddr: addr }, 'closing idle worker channel');
        this.forget(addr);
      }
    }
  }
}

// WorkerRpcClient: the gRPC SlotReserver. It sends RequestTaskSlot to a Worker and classifies every
// failure with `grpcErrToSlotError`, which decides whether a slot MAY have been allocated — the one
// question the orchestration needs answered (seeds § Reserving on the Worker).
//
// Channels: exactly one grpc-js client (one channel, its own subchannel) per Worker address, created on
// first use. A point-to-point client needs no balancer. Channels of Workers that left the registry are
// closed (`forget`), and a sweep closes channels idle for longer than `idleCloseMs`.

import * as grpc from '@grpc/grpc-js';
import { CLIENT_CHANNEL_OPTIONS } from '../../../grpc/channel-options.js';
import { createWorkerClient, unaryCall } from '../../../grpc/clients.js';
import type { WorkerServiceClient } from '../../../grpc/proto.js';
import { businessCodeOf, isServiceError } from '../../../grpc/status.js';
import type { RequestTaskSlotResponseWireOut } from '../../../grpc/wire-types.js';
import { describeError, silentLogger } from '../../registry/registry-port.js';
import type { Logger } from '../../registry/registry-port.js';
import { SlotError } from './slot-reserver.js';
import type {
  SlotErrorCode,
  SlotReply,
  SlotRequest,
  SlotRequestOptions,
  SlotReserver,
} from './slot-reserver.js';

/**
 * UNAVAILABLE details that prove the request never left this process: the channel had no connection
 * (refused, unresolvable, unreachable) or the server refused the HTTP/2 stream before reading it.
 * Anything else UNAVAILABLE (a dropped connection, ECONNRESET, ETIMEDOUT) may have reached the Worker.
 */
const NOT_SENT =
  /No connection established|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|Name resolution failed|Stream refused by server/i;

function rejected(code: SlotErrorCode, err: grpc.ServiceError): SlotError {
  return new SlotError(code, 'rejected', err.details || err.message, { grpcCode: err.code, cause: err });
}

function uncertain(err: grpc.ServiceError): SlotError {
  return new SlotError('SlotUncertain', 'uncertain', err.details || err.message, {
    grpcCode: err.code,
    cause: err,
  });
}

/**
 * Classifies a RequestTaskSlot failure. The inverse of the Worker's (and `coordCodeToGRPC`'s) mapping:
 *   INVALID_ARGUMENT → InvalidArgument, RESOURCE_EXHAUSTED → NoSlot, FAILED_PRECONDITION → InvalidSlot,
 *   NOT_FOUND → NotFound, UNAVAILABLE sent by the Worker (it carries a business code) → Unavailable:
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
  switch (err.code) {
    case grpc.status.INVALID_ARGUMENT:
      return rejected('InvalidArgument', err);
    case grpc.status.RESOURCE_EXHAUSTED:
      return rejected('NoSlot', err);
    case grpc.status.FAILED_PRECONDITION:
      return rejected('InvalidSlot', err);
    case grpc.status.NOT_FOUND:
      return rejected('NotFound', err);
    case grpc.status.UNAVAILABLE:
      if (businessCodeOf(err) !== undefined) return rejected('Unavailable', err);
      if (NOT_SENT.test(err.details || err.message)) {
        return new SlotError('Unavailable', 'transport', err.details || err.message, {
          grpcCode: err.code,
          cause: err,
        });
      }
      return uncertain(err);
    case grpc.status.UNIMPLEMENTED:
    case grpc.status.PERMISSION_DENIED:
    case grpc.status.UNAUTHENTICATED:
      return rejected('Internal', err);
    default:
      // DEADLINE_EXCEEDED, CANCELLED, ABORTED, INTERNAL, UNKNOWN and anything unexpected.
      return uncertain(err);
  }
}

interface Channel {
  readonly client: WorkerServiceClient;
  inFlight: number;
  lastUsedMs: number;
  forgotten: boolean;
}

export interface WorkerRpcClientOptions {
  /** Close a channel unused for this long (default 5 min). */
  readonly idleCloseMs?: number;
  readonly channelOptions?: grpc.ChannelOptions;
  readonly logger?: Logger;
}

export const DEFAULT_IDLE_CLOSE_MS = 5 * 60_000;

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
  private readonly logger: Logger;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(opts: WorkerRpcClientOptions = {}) {
    this.idleCloseMs = opts.idleCloseMs ?? DEFAULT_IDLE_CLOSE_MS;
    this.channelOptions = { ...WORKER_CHANNEL_OPTIONS, ...opts.channelOptions };
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
        { timeoutMs: opts.timeoutMs, signal: opts.signal },
      );
      return { ok: true, grant: { taskId: res.taskId, slotId: res.slotId, state: String(res.state) } };
    } catch (err) {
      return { ok: false, error: grpcErrToSlotError(err) };
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
      const client = createWorkerClient(workerAddr, this.channelOptions);
      channel = { client, inFlight: 0, lastUsedMs: Date.now(), forgotten: false };
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

// The simulated Workers of bench/coordinator-capacity.ts: N fake Workers in this one process, each with
// its own gRPC server on loopback and its own etcd session. Fast fakes, so that the Coordinator and etcd
// are what the bench measures:
//
//   - Heartbeats are the real ones: the Worker's own HeartbeatPublisher (every `intervalMs`, a put still in
//     flight makes the tick a no-op) over the Worker's own EtcdRegistryWriter (one etcd client and one
//     lease per Worker, a leased put of the DESIGN §4.4 JSON), so the bytes, the puts and the keepalives
//     are what a real Worker sends. Host figures are constants (a real Worker samples its cgroup); the
//     slot figures come from the fake's slot table; a 16-hex code version is sent, as real Workers do.
//   - RequestTaskSlot and RequestTaskSlots (the two RPCs the Coordinator calls when reserving) answer from
//     a minimal slot table: a Map of task id → slot, idempotent per task id while held, each slot freed
//     when its ttl_ms passes (nothing is ever submitted), RESOURCE_EXHAUSTED / NoSlot when full. The other
//     Worker RPCs answer UNIMPLEMENTED.
//   - Heartbeat phases are spread at random over one interval, as in a fleet whose Workers started at
//     different times.
//
// Run as a child process with an IPC channel (`node --import tsx bench/lib/capacity-fleet.ts`); the
// parent sends FleetRequest messages and gets one FleetReply per request.
import * as grpc from '@grpc/grpc-js';
import type * as HeartbeatModule from '../../src/contracts/heartbeat.js';
import type * as ProtoModule from '../../src/grpc/proto.js';
import type * as StatusModule from '../../src/grpc/status.js';
import type { SlotGrantWire } from '../../src/grpc/wire-types.js';
import type * as EtcdWriterModule from '../../src/services/registry/etcd-registry-writer.js';
import type * as PublisherModule from '../../src/services/worker/adapters/telemetry/heartbeat-publisher.js';
import type { HeartbeatPublisher } from '../../src/services/worker/adapters/telemetry/heartbeat-publisher.js';
import { loadBuilt } from './built.js';

const { encodeWorkerHeartbeat } = await loadBuilt<typeof HeartbeatModule>('contracts/heartbeat');
const { workerServiceDefinition } = await loadBuilt<typeof ProtoModule>('grpc/proto');
const { bindServer, grpcStatusError } = await loadBuilt<typeof StatusModule>('grpc/status');
const { EtcdRegistryWriter } = await loadBuilt<typeof EtcdWriterModule>(
  'services/registry/etcd-registry-writer',
);
const { HeartbeatPublisher: Publisher } = await loadBuilt<typeof PublisherModule>(
  'services/worker/adapters/telemetry/heartbeat-publisher',
);

export interface FleetSettings {
  readonly etcdEndpoint: string;
  readonly prefix: string;
  readonly intervalMs: number;
  /** taskSlots every fake reports and enforces. */
  readonly taskSlots: number;
  readonly leaseTtlMs: number;
}

export type FleetRequest =
  | { readonly kind: 'grow'; readonly to: number; readonly settings: FleetSettings }
  | { readonly kind: 'stats' }
  | { readonly kind: 'stop' };

export interface FleetStats {
  readonly workers: number;
  /** Heartbeat puts that completed, over the whole fleet. */
  readonly published: number;
  /** Ticks skipped because the previous put was still in flight. */
  readonly skipped: number;
  readonly failed: number;
  /** Slots granted (RequestTaskSlot and RequestTaskSlots ids) and refused as full. */
  readonly granted: number;
  readonly refused: number;
  /** RequestTaskSlot / RequestTaskSlots calls received. */
  readonly unaryCalls: number;
  readonly batchCalls: number;
  /** Bytes of one heartbeat's key and value, as the writer puts them (mean over the fleet). */
  readonly keyBytes: number;
  readonly valueBytes: number;
  /** This process's CPU, ms (user + system). */
  readonly cpuMs: number;
}

export type FleetReply =
  | { readonly kind: 'grown'; readonly addrs: readonly string[] }
  | { readonly kind: 'stats'; readonly stats: FleetStats }
  | { readonly kind: 'error'; readonly message: string };

const HOST = {
  cpuPercent: 0.2,
  memoryPercent: 0.3,
  memoryAvailableBytes: 11 * 1024 ** 3,
  memoryTotalBytes: 16 * 1024 ** 3,
  processRssBytes: 180 * 1024 ** 2,
};
const CODE_VERSION = '3f9a1c07d2b84e65';

const counters = { granted: 0, refused: 0, unaryCalls: 0, batchCalls: 0 };

/** Held slots of one fake, freed in grant order (every slot of a fake has the same TTL per call). */
class SlotTable {
  private readonly held = new Map<string, { readonly slotId: string; readonly expiresAt: number }>();
  private readonly expiries: { readonly taskId: string; readonly expiresAt: number }[] = [];
  private head = 0;
  private seq = 0;

  constructor(private readonly size: number) {}

  get live(): number {
    this.sweep(Date.now());
    return this.held.size;
  }

  grant(taskId: string, ttlMs: number, now: number): string | undefined {
    this.sweep(now);
    const had = this.held.get(taskId);
    if (had !== undefined) return had.slotId;
    if (this.held.size >= this.size) return undefined;
    const slotId = `s${++this.seq}`;
    const expiresAt = now + ttlMs;
    this.held.set(taskId, { slotId, expiresAt });
    this.expiries.push({ taskId, expiresAt });
    return slotId;
  }

  private sweep(now: number): void {
    while (this.head < this.expiries.length) {
      const e = this.expiries[this.head] as { taskId: string; expiresAt: number };
      if (e.expiresAt > now) break;
      if (this.held.get(e.taskId)?.expiresAt === e.expiresAt) this.held.delete(e.taskId);
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.expiries.length) {
      this.expiries.splice(0, this.head);
      this.head = 0;
    }
  }
}

const unimplemented = (_call: unknown, cb?: unknown): void => {
  if (typeof cb === 'function')
    (cb as grpc.sendUnaryData<never>)(
      grpcStatusError(grpc.status.UNIMPLEMENTED, 'not served by the capacity fake'),
    );
};

class FakeWorker {
  readonly server = new grpc.Server();
  addr = '';
  publisher: HeartbeatPublisher | undefined;
  private readonly slots: SlotTable;

  constructor(readonly settings: FleetSettings) {
    this.slots = new SlotTable(settings.taskSlots);
  }

  async start(): Promise<void> {
    const handlers: ProtoModule.WorkerServiceHandlers = {
      RequestTaskSlot: (call, cb) => {
        counters.unaryCalls++;
        const { taskId, ttlMs } = call.request;
        const slotId = this.slots.grant(taskId, ttlMs, Date.now());
        if (slotId === undefined) {
          counters.refused++;
          cb(grpcStatusError(grpc.status.RESOURCE_EXHAUSTED, 'no free slot', 'NoSlot'));
          return;
        }
        counters.granted++;
        cb(null, { taskId, slotId, state: 'TASK_STATE_ALLOCATED' });
      },
      RequestTaskSlots: (call, cb) => {
        counters.batchCalls++;
        const { taskIds, ttlMs } = call.request;
        const now = Date.now();
        cb(null, {
          grants: taskIds.map((taskId): SlotGrantWire => {
            const slotId = this.slots.grant(taskId, ttlMs, now);
            if (slotId === undefined) {
              counters.refused++;
              return {
                taskId,
                error: { code: 'NoSlot', status: grpc.status.RESOURCE_EXHAUSTED, message: 'no free slot' },
              };
            }
            counters.granted++;
            return { taskId, slotId, state: 'TASK_STATE_ALLOCATED' };
          }),
        });
      },
      SubmitTask: unimplemented,
      GetTaskResult: unimplemented,
      WatchTasks: (call) => call.end(),
      RunTasks: (call) => call.end(),
    };
    this.server.addService(workerServiceDefinition, handlers);
    const port = await bindServer(this.server, '127.0.0.1:0');
    this.addr = `127.0.0.1:${port}`;
    const { settings } = this;
    this.publisher = new Publisher({
      writer: new EtcdRegistryWriter({ endpoints: [settings.etcdEndpoint], leaseTtlMs: settings.leaseTtlMs }),
      prefix: settings.prefix,
      workerAddr: this.addr,
      intervalMs: settings.intervalMs,
      deriveHeartbeat: () => ({
        taskSlots: settings.taskSlots,
        reservedSlots: this.slots.live,
        runningTasks: 0,
      }),
      metrics: { sample: () => HOST },
      codeVersion: () => ({ version: CODE_VERSION }),
    });
    const publisher = this.publisher;
    // A random phase within one interval, as in a fleet whose Workers started at different times.
    setTimeout(() => publisher.start(), Math.random() * settings.intervalMs);
  }

  async stop(): Promise<void> {
    await this.publisher?.stop();
    this.server.forceShutdown();
  }
}

const fleet: FakeWorker[] = [];

async function handle(req: FleetRequest): Promise<FleetReply> {
  switch (req.kind) {
    case 'grow': {
      while (fleet.length < req.to) {
        const w = new FakeWorker(req.settings);
        await w.start();
        fleet.push(w);
      }
      return { kind: 'grown', addrs: fleet.map((w) => w.addr) };
    }
    case 'stats': {
      const totals = { published: 0, skipped: 0, failed: 0 };
      let keyBytes = 0;
      let valueBytes = 0;
      for (const w of fleet) {
        const s = w.publisher?.stats;
        totals.published += s?.published ?? 0;
        totals.skipped += s?.skipped ?? 0;
        totals.failed += s?.failed ?? 0;
        const hb = w.publisher?.buildHeartbeat();
        if (hb !== undefined) {
          keyBytes += Buffer.byteLength(`${w.settings.prefix}${w.addr}`);
          valueBytes += Buffer.byteLength(encodeWorkerHeartbeat(hb));
        }
      }
      const cpu = process.cpuUsage();
      const n = Math.max(1, fleet.length);
      return {
        kind: 'stats',
        stats: {
          workers: fleet.length,
          ...totals,
          ...counters,
          keyBytes: keyBytes / n,
          valueBytes: valueBytes / n,
          cpuMs: (cpu.user + cpu.system) / 1000,
        },
      };
    }
    case 'stop':
      await Promise.all(fleet.map((w) => w.stop()));
      return { kind: 'grown', addrs: [] };
  }
}

if (process.send !== undefined) {
  process.on('message', (req: FleetRequest) => {
    handle(req).then(
      (reply) => {
        process.send?.(reply);
        if (req.kind === 'stop') process.disconnect();
      },
      (err: unknown) => process.send?.({ kind: 'error', message: String(err) }),
    );
  });
  // The parent going away ends the fleet (its etcd leases then expire on their own).
  process.on('disconnect', () => process.exit(0));
}

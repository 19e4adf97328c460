// The public error table of docs/coordinator.md, observed through a real grpc-js server serving
// CoordinatorService and BundleCoordinatorService with the same CoordinatorServer (fake Workers).
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleCoordinatorServer } from '../../../../../src/services/coordinator/adapters/bundle-coordinator-server.js';
import { CoordinatorServer } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import {
  createBundleCoordinatorClient,
  createCoordinatorClient,
  unaryCall,
} from '../../../../../src/grpc/clients.js';
import {
  bundleCoordinatorServiceDefinition,
  coordinatorServiceDefinition,
} from '../../../../../src/grpc/proto.js';
import { bindServer, businessCodeOf } from '../../../../../src/grpc/status.js';
import type { ReserveWorkerSlotResponseWireOut } from '../../../../../src/grpc/wire-types.js';
import { FakeReserver, NOW, hb, reply } from '../../../../unit/services/coordinator/adapters/fakes.js';
import type { Step } from '../../../../unit/services/coordinator/adapters/fakes.js';

interface Outcome {
  code: number;
  business?: string;
  details?: string;
  response?: ReserveWorkerSlotResponseWireOut;
}

describe('ReserveWorkerSlot over gRPC', () => {
  const grpcServer = new grpc.Server();
  let client: ReturnType<typeof createCoordinatorClient>;
  let bundleClient: ReturnType<typeof createBundleCoordinatorClient>;
  let core: CoordinatorCore;
  const script: Record<string, Step[]> = {};
  let reserver = new FakeReserver();

  beforeAll(async () => {
    core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
    const delegate = {
      requestTaskSlot: (...args: Parameters<FakeReserver['requestTaskSlot']>) =>
        reserver.requestTaskSlot(...args),
    };
    const server = new CoordinatorServer({ core, reserver: delegate, clock: () => NOW });
    grpcServer.addService(coordinatorServiceDefinition, server.handlers());
    grpcServer.addService(bundleCoordinatorServiceDefinition, new BundleCoordinatorServer(server).handlers());
    const port = await bindServer(grpcServer, '127.0.0.1:0');
    client = createCoordinatorClient(`127.0.0.1:${port}`);
    bundleClient = createBundleCoordinatorClient(`127.0.0.1:${port}`);
  });

  afterAll(() => {
    client?.close();
    bundleClient?.close();
    grpcServer.forceShutdown();
  });

  async function reserve(taskId: string, bundle = false): Promise<Outcome> {
    try {
      const response = await unaryCall<ReserveWorkerSlotResponseWireOut>(
        (md, o, cb) =>
          bundle
            ? bundleClient.reserveWorkerSlot({ taskId }, md, o, cb)
            : client.reserveWorkerSlot({ taskId }, md, o, cb),
        { timeoutMs: 5_000 },
      );
      return { code: grpc.status.OK, response };
    } catch (err) {
      const e = err as grpc.ServiceError;
      return { code: e.code, business: businessCodeOf(e), details: e.details };
    }
  }

  function fleet(workers: ReturnType<typeof hb>[], steps: Record<string, Step[]> = {}): void {
    // The clock is frozen at NOW, so this core's own reservations from earlier tests would never age out
    // (worker-view.ts): an empty list first forgets every Worker's local state.
    core.applyFullWorkerList([], NOW);
    core.applyFullWorkerList(workers, NOW);
    for (const k of Object.keys(script)) delete script[k];
    Object.assign(script, steps);
    reserver = new FakeReserver(script);
  }

  it('Unavailable before the first view, and no worker is contacted', async () => {
    expect(await reserve('t')).toMatchObject({ code: grpc.status.UNAVAILABLE, business: 'Unavailable' });
    expect(reserver.calls).toHaveLength(0);
  });

  it('InvalidArgument for an empty task id', async () => {
    fleet([hb('w1', 4)]);
    expect(await reserve('')).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      business: 'InvalidArgument',
    });
  });

  it('InvalidArgument for a 1 MiB task id on both services, promptly; the connection still works', async () => {
    fleet([hb('w1', 4)]);
    const huge = 'x'.repeat(1024 * 1024);
    for (const bundle of [false, true]) {
      expect(await reserve(huge, bundle)).toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        business: 'InvalidArgument',
        details: 'taskId must be at most 256 bytes (UTF-8)',
      });
    }
    expect(reserver.calls).toHaveLength(0);
    expect((await reserve('after-huge')).code).toBe(grpc.status.OK);
  });

  it('returns task id, worker address and slot id on success, on both services', async () => {
    fleet([hb('w1', 4)]);
    expect((await reserve('t1')).response).toEqual({ taskId: 't1', workerAddr: 'w1', slotId: 'slot-w1-1' });
    expect((await reserve('t2', true)).response).toEqual({
      taskId: 't2',
      workerAddr: 'w1',
      slotId: 'slot-w1-2',
    });
  });

  it('ResourceExhausted (NoExecutableSlot) when nothing has free capacity', async () => {
    fleet([hb('w1', 1, { reservedSlots: 1 })]);
    expect(await reserve('t')).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      business: 'NoExecutableSlot',
    });
  });

  it('ResourceExhausted "all candidates rejected" when every candidate rejects', async () => {
    fleet([hb('w1', 4), hb('w2', 2)], { w1: ['noSlot'], w2: ['noSlot'] });
    expect(await reserve('t', true)).toEqual({
      code: grpc.status.RESOURCE_EXHAUSTED,
      business: 'AllCandidatesRejected',
      details: 'all candidates rejected',
    });
  });

  it('Aborted "unable to confirm slot reservation" (SlotUncertain) when still uncertain', async () => {
    fleet([hb('w1', 4), hb('w2', 2)], { w1: ['uncertain', 'uncertain'] });
    // An id of its own: the core remembers where each id went (placement memory, docs/placement.md § One
    // execution per task id), and the tests above sent 't' to w2 last, so 't' would go back there first.
    expect(await reserve('t-uncertain')).toEqual({
      code: grpc.status.ABORTED,
      business: 'SlotUncertain',
      details: 'unable to confirm slot reservation',
    });
    expect(reserver.contacted).toEqual(['w1', 'w1']);
  });

  describe('a Client that goes away cancels the RequestTaskSlot in flight', () => {
    /** A Worker that never answers: its RequestTaskSlot ends only when the Coordinator cancels it. */
    class HangingReserver extends FakeReserver {
      readonly cancelled: Promise<void>;
      private onCancelled: () => void = () => undefined;
      constructor() {
        super();
        this.cancelled = new Promise((resolve) => (this.onCancelled = resolve));
      }
      override requestTaskSlot(
        workerAddr: string,
        req: Parameters<FakeReserver['requestTaskSlot']>[1],
        opts: Parameters<FakeReserver['requestTaskSlot']>[2],
      ): ReturnType<FakeReserver['requestTaskSlot']> {
        this.calls.push({ workerAddr, taskId: req.taskId, ttlMs: req.ttlMs, timeoutMs: opts.timeoutMs });
        return new Promise((resolve) => {
          opts.signal?.addEventListener('abort', () => {
            this.onCancelled();
            resolve(reply('uncertain', workerAddr, req.taskId));
          });
        });
      }
    }

    it('when the deadline of a BlockX client (enforced by the client) passes', async () => {
      fleet([hb('w1', 4)]);
      const hanging = new HangingReserver();
      reserver = hanging;
      const started = Date.now();
      const err = await unaryCall<ReserveWorkerSlotResponseWireOut>(
        (md, o, cb) => client.reserveWorkerSlot({ taskId: 'gone-1' }, md, o, cb),
        { timeoutMs: 100 },
      ).then(
        () => undefined,
        (e: unknown) => e as grpc.ServiceError,
      );
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      await hanging.cancelled;
      expect(Date.now() - started).toBeGreaterThanOrEqual(99);
      expect(hanging.contacted).toEqual(['w1']);
    });

    it('when the gRPC deadline (grpc-timeout) of another client passes', async () => {
      fleet([hb('w1', 4)]);
      const hanging = new HangingReserver();
      reserver = hanging;
      const err = await new Promise<grpc.ServiceError | null>((resolve) => {
        client.reserveWorkerSlot({ taskId: 'gone-2' }, { deadline: Date.now() + 100 }, (e) => resolve(e));
      });
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      await hanging.cancelled;
      expect(hanging.contacted).toEqual(['w1']);
    });
  });
});

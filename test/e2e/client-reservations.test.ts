// Reservations per client on a real cluster with mutual TLS (docs/security.md § Reservations per
// client): the identity is the client certificate's CN, forwarded by the Coordinator to the Worker; a
// submitter cannot pose as another client; a client at `maxReservedSlotsPerClient` is refused; and a
// worker filled by one client's reservations still serves a newcomer (fair-share reclaim), through the
// Coordinator too, which learns of reclaimable slots from the heartbeat.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyAndCert } from '../../src/cli/certs/dev-ca.js';
import { CoordinatorServiceClient, WorkerServiceClient } from '../../src/grpc/proto.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { loopbackTls } from '../support/certs.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-quota-'));
const tls = loopbackTls(dir);
const certs = {
  alice: tls.issue('alice'),
  bob: tls.issue('bob'),
  carol: tls.issue('carol'),
};
const creds = (kc: KeyAndCert) =>
  grpc.credentials.createSsl(Buffer.from(tls.ca.cert), Buffer.from(kc.key), Buffer.from(kc.cert));
const deadline = () => ({ deadline: Date.now() + 5_000 });

interface Reservation {
  taskId: string;
  workerAddr: string;
  slotId: string;
  error?: { code: string; message: string } | null;
}

function reserveMany(client: CoordinatorServiceClient, taskIds: string[]): Promise<Reservation[]> {
  return new Promise((resolve, reject) =>
    client.reserveWorkerSlots({ taskIds }, new grpc.Metadata(), deadline(), (err, res) =>
      err ? reject(err) : resolve((res?.reservations ?? []) as Reservation[]),
    ),
  );
}

function requestSlot(
  client: WorkerServiceClient,
  taskId: string,
  forwarded?: string,
): Promise<{ slotId: string } | grpc.ServiceError> {
  const md = new grpc.Metadata();
  if (forwarded !== undefined) md.set('blockx-client', forwarded);
  return new Promise((resolve) =>
    client.requestTaskSlot({ taskId, ttlMs: 60_000 }, md, deadline(), (err, res) =>
      resolve(err ?? { slotId: res!.slotId }),
    ),
  );
}

describe('reservations per client, with mutual TLS', () => {
  let cluster: TestCluster;
  const clients: { close(): void }[] = [];
  const coordinatorAs = (kc: KeyAndCert) => {
    const c = new CoordinatorServiceClient(cluster.coordinatorAddr, creds(kc));
    clients.push(c);
    return c;
  };
  const workerAs = (kc: KeyAndCert) => {
    const c = new WorkerServiceClient(cluster.workers[0]!.addr, creds(kc));
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    cluster = await startCluster({
      workers: 1,
      taskSlots: 4,
      env: {
        BLOCKX_TLS_CA: tls.files.ca,
        BLOCKX_TLS_CERT: tls.files.cert,
        BLOCKX_TLS_KEY: tls.files.key,
        MAX_RESERVED_SLOTS_PER_CLIENT: '3',
        // Reservations must outlive the test: a lease that expired would free the slots by itself.
        COORDINATOR_SLOT_TTL_MS: '60000',
      },
      clientTls: { ca: tls.ca.cert, cert: tls.node.cert, key: tls.node.key },
    });
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('limits one client, cannot be dodged by claiming another identity, and reclaims for a newcomer', async () => {
    const run = Date.now();
    // alice asks the Coordinator for all four slots: the Worker grants three (her limit).
    const alice = await reserveMany(
      coordinatorAs(certs.alice),
      [1, 2, 3, 4].map((i) => `a${i}-${run}`),
    );
    const granted = alice.filter((r) => r.slotId !== '');
    expect(granted.map((r) => r.taskId)).toEqual([1, 2, 3].map((i) => `a${i}-${run}`));
    expect(alice[3]!.error).toBeTruthy();

    // Straight to the Worker, claiming to be someone else: her submitter certificate cannot forward.
    const forged = await requestSlot(workerAs(certs.alice), `a5-${run}`, 'dave');
    expect((forged as grpc.ServiceError).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect((forged as grpc.ServiceError).details).toMatch(/client alice holds 3 unsubmitted reservations/);

    // bob takes the last free slot through the Coordinator. Its view of the worker's capacity is
    // eventually consistent (heartbeats, its own not-yet-reflected grants), so, as a client would, ask
    // again on a NoExecutableSlot.
    const reserveEventually = async (client: CoordinatorServiceClient, taskId: string) => {
      let last: Reservation | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        [last] = await reserveMany(client, [taskId]);
        if (last!.slotId !== '') return last!;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`${taskId} never reserved: ${JSON.stringify(last?.error)}`);
    };
    const bob = await reserveEventually(coordinatorAs(certs.bob), `b1-${run}`);
    expect(bob.workerAddr).toBe(cluster.workers[0]!.addr);

    // The Worker is full (alice 3, bob 1). carol, holding none, still gets one: alice's oldest
    // reservation is reclaimed. The Coordinator routes her there once a heartbeat shows it reclaimable.
    const got = await reserveEventually(coordinatorAs(certs.carol), `c1-${run}`);
    expect(got.workerAddr).toBe(cluster.workers[0]!.addr);

    // alice's first reservation is gone: submitting on it is refused; her newest ones still stand.
    const submit = (taskId: string, slotId: string) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        workerAs(certs.alice).submitTask(
          {
            slotId,
            task: {
              taskId,
              functionCallConfig: {
                type: 'CallListCallConfig',
                config: Buffer.from(JSON.stringify({ function: 'hello_world', callList: [['x']] })),
              },
            },
          },
          new grpc.Metadata(),
          deadline(),
          (err) => resolve(err),
        ),
      );
    const lost = await submit(granted[0]!.taskId, granted[0]!.slotId);
    expect(lost?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(await submit(granted[2]!.taskId, granted[2]!.slotId)).toBeNull();
  });
});

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { HealthClient, OVERALL_SERVICE, checkHealth, createHealth } from '../../../src/grpc/health.js';
import type { Health, HealthStatus } from '../../../src/grpc/health.js';
import { HealthServiceUnknownError } from '../../../src/grpc/errors.js';
import { SERVICE_NAMES } from '../../../src/grpc/proto.js';
import { bindServer, shutdownServer, statusCodeOf } from '../../../src/grpc/status.js';

let server: grpc.Server;
let health: Health;
let client: HealthClient;

beforeAll(async () => {
  server = new grpc.Server();
  health = createHealth([SERVICE_NAMES.worker]);
  health.addToServer(server);
  const port = await bindServer(server, '127.0.0.1:0');
  client = new HealthClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  if (server) await shutdownServer(server, 1000);
});

describe('createHealth', () => {
  it('starts every declared service and the overall status as NOT_SERVING', async () => {
    const fresh = createHealth(['a', 'b']);
    expect(['', 'a', 'b'].map((s) => fresh.statusOf(s))).toEqual([
      'NOT_SERVING',
      'NOT_SERVING',
      'NOT_SERVING',
    ]);
    expect(await checkHealth(client, OVERALL_SERVICE, 5000)).toBe('NOT_SERVING');
    expect(await checkHealth(client, SERVICE_NAMES.worker, 5000)).toBe('NOT_SERVING');
  });

  it('setServing flips one service, including the overall "" service, as seen by Check', async () => {
    health.setServing(SERVICE_NAMES.worker, true);
    expect(await checkHealth(client, SERVICE_NAMES.worker, 5000)).toBe('SERVING');
    expect(await checkHealth(client, OVERALL_SERVICE, 5000)).toBe('NOT_SERVING');
    health.setServing(OVERALL_SERVICE, true);
    expect(await checkHealth(client, OVERALL_SERVICE, 5000)).toBe('SERVING');
    health.setAllServing(false);
    expect(await checkHealth(client, OVERALL_SERVICE, 5000)).toBe('NOT_SERVING');
    expect(await checkHealth(client, SERVICE_NAMES.worker, 5000)).toBe('NOT_SERVING');
  });

  it('Check on an undeclared service is NOT_FOUND; setServing on one throws', async () => {
    let err: unknown;
    try {
      await checkHealth(client, 'blockx.nope.v1.Nope', 5000);
    } catch (e) {
      err = e;
    }
    expect(statusCodeOf(err)).toBe(grpc.status.NOT_FOUND);
    expect(() => health.setServing('blockx.nope.v1.Nope', true)).toThrow(HealthServiceUnknownError);
  });

  it('Watch streams the current status, then every change', async () => {
    health.setServing(OVERALL_SERVICE, false);
    const seen: HealthStatus[] = [];
    const stream = client.watch({ service: OVERALL_SERVICE });
    const done = new Promise<void>((resolve) => {
      stream.on('data', (msg: { status: HealthStatus }) => {
        seen.push(msg.status);
        if (seen.length === 1) health.setServing(OVERALL_SERVICE, true);
        if (seen.length === 2) resolve();
      });
    });
    stream.on('error', () => undefined); // cancelled below
    await done;
    stream.cancel();
    expect(seen).toEqual(['NOT_SERVING', 'SERVING']);
  });
});

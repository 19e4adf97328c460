// HeartbeatPublisher's code-version fields (docs/functions-deploy.md § Where the version shows): read
// from the injected source at every heartbeat, sent only when set, and none without a source.
import { describe, expect, it } from 'vitest';
import { HeartbeatPublisher } from '../../../../../../src/services/worker/adapters/telemetry/heartbeat-publisher.js';
import type { WorkerRegistryWriter } from '../../../../../../src/services/registry/registry-port.js';

const writer: WorkerRegistryWriter = {
  publish: async () => {},
  remove: async () => {},
  close: async () => {},
};
const HOST = {
  sample: () => ({
    cpuPercent: 0,
    memoryPercent: 0,
    memoryAvailableBytes: 1,
    memoryTotalBytes: 1,
    processRssBytes: 1,
  }),
};

function publisher(codeVersion?: () => { version?: string; error?: string }) {
  return new HeartbeatPublisher({
    writer,
    prefix: '/blockx/workers/',
    workerAddr: 'w:1',
    intervalMs: 1_000,
    deriveHeartbeat: () => ({ taskSlots: 4, reservedSlots: 0, runningTasks: 0 }),
    metrics: HOST,
    clock: () => 5,
    ...(codeVersion ? { codeVersion } : {}),
  });
}

describe('heartbeat code version', () => {
  it('follows the source at every heartbeat', () => {
    let status: { version?: string; error?: string } = {};
    const p = publisher(() => status);
    expect(p.buildHeartbeat()).not.toHaveProperty('codeVersion');
    status = { version: '0123456789abcdef' };
    expect(p.buildHeartbeat()).toMatchObject({ codeVersion: '0123456789abcdef' });
    expect(p.buildHeartbeat()).not.toHaveProperty('codeVersionError');
    status = {
      version: '0123456789abcdef',
      error: 'refused version fedcba9876543210 (still serving 0123456789abcdef): x',
    };
    expect(p.buildHeartbeat()).toMatchObject({
      codeVersion: '0123456789abcdef',
      codeVersionError: status.error,
    });
  });

  it('without a source neither field is sent', () => {
    const hb = publisher().buildHeartbeat();
    expect(hb).not.toHaveProperty('codeVersion');
    expect(hb).not.toHaveProperty('codeVersionError');
  });
});

// HeartbeatPublisher#capacityFreed (docs/batched-protocol.md § Capacity heartbeats) on virtual time:
// an early heartbeat follows the previous put by `capacityHeartbeatMs` once an eighth of the slots (at
// least one) was freed since it, never sooner, at most one per window, none when off or stopped.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeartbeatPublisher } from '../../../../../../src/services/worker/adapters/telemetry/heartbeat-publisher.js';
import type { WorkerHeartbeat } from '../../../../../../src/contracts/heartbeat.js';
import type { WorkerRegistryWriter } from '../../../../../../src/services/registry/registry-port.js';

class RecordingWriter implements WorkerRegistryWriter {
  readonly puts: number[] = [];
  async publish(_prefix: string, hb: WorkerHeartbeat): Promise<void> {
    this.puts.push(hb.lastHeartbeatMs);
  }
  async remove(): Promise<void> {}
  async close(): Promise<void> {}
}

const HOST = {
  sample: () => ({
    cpuPercent: 0,
    memoryPercent: 0,
    memoryAvailableBytes: 1,
    memoryTotalBytes: 1,
    processRssBytes: 1,
  }),
};

function publisher(taskSlots: number, capacityHeartbeatMs: number, intervalMs = 1_000) {
  const writer = new RecordingWriter();
  const p = new HeartbeatPublisher({
    writer,
    prefix: '/blockx/workers/',
    workerAddr: 'w:1',
    intervalMs,
    capacityHeartbeatMs,
    deriveHeartbeat: () => ({ taskSlots, reservedSlots: 0, runningTasks: 0 }),
    metrics: HOST,
    clock: () => Date.now(),
  });
  return { p, writer };
}

/** Lets the fake clock run `ms` and the puts' promises settle. */
async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

describe('capacity heartbeats', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a freed slot brings the next heartbeat forward to 25 ms after the previous one, not sooner', async () => {
    const { p, writer } = publisher(8, 25);
    p.start();
    await advance(0);
    expect(writer.puts).toEqual([1_000_000]);
    await advance(5);
    p.capacityFreed();
    p.capacityFreed();
    await advance(19);
    expect(writer.puts).toHaveLength(1);
    await advance(1);
    expect(writer.puts).toEqual([1_000_000, 1_000_025]);
    expect(p.stats.early).toBe(1);
    // Freed long after the last put: at once.
    await advance(100);
    p.capacityFreed();
    await advance(0);
    expect(writer.puts).toEqual([1_000_000, 1_000_025, 1_000_125]);
    await p.stop();
  });

  it('waits for an eighth of the slots to be freed since the last heartbeat', async () => {
    const { p, writer } = publisher(64, 25);
    p.start();
    await advance(30);
    for (let i = 0; i < 7; i++) p.capacityFreed();
    await advance(50);
    expect(writer.puts).toHaveLength(1);
    p.capacityFreed();
    await advance(0);
    expect(writer.puts).toHaveLength(2);
    // The count starts again after each put.
    for (let i = 0; i < 7; i++) p.capacityFreed();
    await advance(100);
    expect(writer.puts).toHaveLength(2);
    await p.stop();
  });

  it('under a steady stream of freed slots, about one put per window and no more', async () => {
    const { p, writer } = publisher(8, 25, 10_000);
    p.start();
    for (let t = 0; t < 1_000; t++) {
      p.capacityFreed();
      await advance(1);
    }
    // 1,000 ms of freed slots at a 25 ms minimum spacing: the start put plus at most 40 early ones.
    expect(writer.puts.length).toBeGreaterThanOrEqual(38);
    expect(writer.puts.length).toBeLessThanOrEqual(41);
    const gaps = writer.puts.slice(1).map((t, i) => t - (writer.puts[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(25);
    await p.stop();
  });

  it('0 turns it off, and stop() cancels an early heartbeat already planned', async () => {
    const off = publisher(8, 0);
    off.p.start();
    await advance(10);
    off.p.capacityFreed();
    await advance(500);
    expect(off.writer.puts).toHaveLength(1);
    await off.p.stop();

    const on = publisher(8, 25);
    on.p.start();
    await advance(1);
    on.p.capacityFreed();
    await on.p.stop();
    await advance(100);
    expect(on.writer.puts).toHaveLength(1);
  });
});

// The registry across a process boundary (src/services/registry/ipc-registry.ts): a Worker child's
// writer sends its operations as messages, the parent applies them to a session of its in-process
// registry, and the session ends — keys gone, as a lease's — when the child closes its writer or the
// parent ends it (the child exited, its channel closed). The channel here is an array the test drains.
import { describe, expect, it } from 'vitest';
import { parseWorkerHeartbeat } from '../../../../src/contracts/heartbeat.js';
import { InProcessRegistry } from '../../../../src/services/registry/in-process-registry.js';
import {
  IpcRegistrySession,
  IpcRegistryWriter,
  isRegistryIpcMessage,
  type RegistryIpcMessage,
} from '../../../../src/services/registry/ipc-registry.js';
import type { RegistryEvent } from '../../../../src/services/registry/registry-port.js';
import { hb } from '../coordinator/core/fixtures.js';

const PREFIX = '/blockx/workers/';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A child's writer and the parent's session over an in-memory channel; `deliver` carries what was sent. */
function pair() {
  const registry = new InProcessRegistry();
  const channel: RegistryIpcMessage[] = [];
  let open = true;
  const writer = new IpcRegistryWriter((message) => {
    if (!open) throw new Error('channel closed');
    // Structured clone, as the IPC channel does: nothing is shared by reference.
    channel.push(structuredClone(message));
  });
  const session = new IpcRegistrySession(registry.writer());
  const deliver = async (): Promise<void> => {
    for (const message of channel.splice(0)) await session.apply(message);
  };
  return { registry, writer, session, deliver, closeChannel: () => (open = false), channel };
}

describe('registry over a message channel', () => {
  it('publishes and removes keys in the parent registry, in the order sent', async () => {
    const { registry, writer, deliver } = pair();
    await writer.publish(PREFIX, hb('127.0.0.1:9001'));
    await writer.publish(PREFIX, hb('127.0.0.1:9001', { runningTasks: 3 }));
    await writer.publish(PREFIX, hb('127.0.0.1:9002'));
    expect(registry.keys()).toEqual([]); // nothing applied before the messages arrive
    await deliver();
    expect(registry.keys(PREFIX)).toEqual([`${PREFIX}127.0.0.1:9001`, `${PREFIX}127.0.0.1:9002`]);
    const parsed = parseWorkerHeartbeat(registry.get(`${PREFIX}127.0.0.1:9001`) ?? '');
    expect(parsed.ok && parsed.value).toEqual(hb('127.0.0.1:9001', { runningTasks: 3 }));
    await writer.remove(PREFIX, '127.0.0.1:9002');
    await deliver();
    expect(registry.keys(PREFIX)).toEqual([`${PREFIX}127.0.0.1:9001`]);
  });

  it('a watcher of the parent registry sees the child as a put, then a delete when the session ends', async () => {
    const { registry, writer, session, deliver } = pair();
    const events: RegistryEvent[] = [];
    registry.watch([PREFIX], (e) => events.push(e));
    await writer.publish(PREFIX, hb('127.0.0.1:9001'));
    await deliver();
    await session.end(); // the child exited
    await flush();
    expect(events.map((e) => e.type)).toEqual(['list', 'put', 'delete']);
    expect(registry.keys()).toEqual([]);
  });

  it("the child's close ends the session: its keys disappear", async () => {
    const { registry, writer, deliver } = pair();
    await writer.publish(PREFIX, hb('127.0.0.1:9001'));
    await writer.close();
    await deliver();
    expect(registry.keys()).toEqual([]);
    await expect(writer.publish(PREFIX, hb('127.0.0.1:9001'))).rejects.toThrow(/closed/);
  });

  it('after the parent ended the session, late messages change nothing', async () => {
    const { registry, writer, session, deliver } = pair();
    await writer.publish(PREFIX, hb('127.0.0.1:9001'));
    await deliver();
    await session.end();
    await writer.publish(PREFIX, hb('127.0.0.1:9001')); // sent before the child learnt it was cut off
    await deliver();
    expect(registry.keys()).toEqual([]);
    await session.end(); // idempotent
  });

  it('a closed channel fails a publish and leaves close quiet', async () => {
    const { writer, closeChannel } = pair();
    closeChannel();
    await expect(writer.publish(PREFIX, hb('127.0.0.1:9001'))).rejects.toThrow(/channel closed/);
    await expect(writer.close()).resolves.toBeUndefined();
  });

  it('tells its messages apart from the other messages of the channel', () => {
    expect(isRegistryIpcMessage({ kind: 'registry', op: 'close' })).toBe(true);
    for (const other of [{ kind: 'ready' }, { op: 'close' }, null, 'registry', 1])
      expect(isRegistryIpcMessage(other)).toBe(false);
  });
});

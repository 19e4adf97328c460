// The registry port across a process boundary: a Worker running in a child process of `blockx up`
// (src/app/worker-child/) publishes its heartbeats into the in-process registry of its parent, whose
// Coordinator watches it. Two halves, joined by any ordered message channel (Node's IPC channel of a
// forked child in production, an array in tests):
//
//   child   IpcRegistryWriter        a WorkerRegistryWriter that turns publish / remove / close into
//                                    RegistryIpcMessages and sends them
//   parent  IpcRegistrySession       applies those messages to one writer session of the registry
//
// The session is the child's lease: it ends — every key it published removed — when the child closes
// its writer, and also when the parent calls `end()` because the child exited or its channel closed, as
// etcd revokes the lease of a Worker that stopped heartbeating. Messages are fire-and-forget: the
// channel is ordered and local, so a publish resolves once it is sent, as the in-process writer's does
// once applied. After `end()` nothing more is applied, whatever still arrives.

import type { WorkerHeartbeat } from '../../contracts/heartbeat.js';
import type { WorkerRegistryWriter } from './registry-port.js';

/** What the child's writer sends; `kind: 'registry'` tells it apart on a channel carrying others. */
export type RegistryIpcMessage =
  | {
      readonly kind: 'registry';
      readonly op: 'publish';
      readonly prefix: string;
      readonly heartbeat: WorkerHeartbeat;
    }
  | { readonly kind: 'registry'; readonly op: 'remove'; readonly prefix: string; readonly workerAddr: string }
  | { readonly kind: 'registry'; readonly op: 'close' };

export function isRegistryIpcMessage(message: unknown): message is RegistryIpcMessage {
  return (
    typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'registry'
  );
}

/** The child's half: a writer session whose operations travel to the parent's registry. */
export class IpcRegistryWriter implements WorkerRegistryWriter {
  private closed = false;

  /** `send` delivers one message, in order; it throws when the channel is gone. */
  constructor(private readonly send: (message: RegistryIpcMessage) => void) {}

  async publish(prefix: string, heartbeat: WorkerHeartbeat): Promise<void> {
    if (this.closed) throw new Error('registry writer is closed');
    this.send({ kind: 'registry', op: 'publish', prefix, heartbeat });
  }

  async remove(prefix: string, workerAddr: string): Promise<void> {
    if (this.closed) return;
    this.send({ kind: 'registry', op: 'remove', prefix, workerAddr });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.send({ kind: 'registry', op: 'close' });
    } catch {
      // The channel is gone: the parent ends the session itself when it sees that.
    }
  }
}

/** The parent's half: one child's session, a writer of the parent's registry. */
export class IpcRegistrySession {
  private ended = false;

  constructor(private readonly writer: WorkerRegistryWriter) {}

  /** Applies one message of the child's writer (in the order they came). */
  async apply(message: RegistryIpcMessage): Promise<void> {
    if (this.ended) return;
    switch (message.op) {
      case 'publish':
        return this.writer.publish(message.prefix, message.heartbeat);
      case 'remove':
        return this.writer.remove(message.prefix, message.workerAddr);
      case 'close':
        return this.end();
      default: {
        const unknown: never = message;
        throw new Error(`unknown registry message ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** Ends the session: its keys disappear. Idempotent. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.writer.close();
  }
}

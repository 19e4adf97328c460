// The messages between `blockx up` and one of its Worker child processes, over the IPC channel of
// the forked child (structured clone: Buffers travel as they are). Every message has a `kind`.
//
//   parent → child   start (once, first), stop, request (metrics), reply (to the child's requests)
//   child → parent   ready | failed (once, answering start), registry (ipc-registry.ts), request
//                    (the functions store), reply (to the parent's requests)
//
// Requests carry an id unique on their side of the channel; each gets exactly one reply, or is failed
// when the channel closes (PendingRequests).

import type { FlagOverride } from '../../kernel/config.js';
import type { RegistryIpcMessage } from '../../services/registry/ipc-registry.js';

/** What the child needs to load the very config its parent runs, and which Worker it is. */
export interface WorkerChildStart {
  readonly kind: 'start';
  /** `worker #index` of `blockx up`'s lines and logs. */
  readonly index: number;
  readonly deployment: string;
  /** `host:port` the Worker binds (port 0: a free one). */
  readonly listen: string;
  /** The parent's `--config`, cwd and flags; the environment is inherited. */
  readonly config: {
    readonly configPath?: string;
    readonly cwd: string;
    readonly flags: readonly FlagOverride[];
  };
  /** The level of the JSON log lines on stderr (the parent's). */
  readonly logLevel: string;
  /** Heartbeats go to the parent's in-process registry (else to etcd, as the config says). */
  readonly registryFromParent: boolean;
  /** Deployed functions come from the parent's functions store (`functions.source: cluster` without etcd). */
  readonly functionsFromParent: boolean;
}

/** The parent asks; `what` names the operation. */
export type RequestWhat = 'metrics' | 'functions.current' | 'functions.fetch';

export interface IpcRequest {
  readonly kind: 'request';
  readonly id: number;
  readonly what: RequestWhat;
  readonly arg?: unknown;
}

export type IpcReply =
  | { readonly kind: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly kind: 'reply'; readonly id: number; readonly ok: false; readonly error: string };

export type ParentMessage = WorkerChildStart | { readonly kind: 'stop' } | IpcRequest | IpcReply;

export type ChildMessage =
  | { readonly kind: 'ready'; readonly address: string; readonly boundAddress: string }
  | { readonly kind: 'failed'; readonly error: string }
  | RegistryIpcMessage
  | IpcRequest
  | IpcReply;

/** Requests sent on one side of the channel, waiting for their replies. */
export class PendingRequests {
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (err: Error) => void; timer?: NodeJS.Timeout }
  >();

  /**
   * Sends a request and resolves with its reply's value; rejects with the reply's error, when `send`
   * throws (the channel is gone), after `timeoutMs` if given, or when `failAll` is called.
   */
  request(
    send: (message: IpcRequest) => void,
    what: RequestWhat,
    arg?: unknown,
    timeoutMs?: number,
  ): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const entry: {
        resolve: (value: unknown) => void;
        reject: (err: Error) => void;
        timer?: NodeJS.Timeout;
      } = { resolve, reject };
      if (timeoutMs !== undefined) {
        entry.timer = setTimeout(() => {
          this.waiting.delete(id);
          reject(new Error(`${what}: no answer from the other process within ${timeoutMs} ms`));
        }, timeoutMs);
        entry.timer.unref();
      }
      this.waiting.set(id, entry);
      try {
        send({ kind: 'request', id, what, ...(arg === undefined ? {} : { arg }) });
      } catch (err) {
        this.settle(id, () => reject(err instanceof Error ? err : new Error(String(err))));
      }
    });
  }

  /** Settles the request a reply answers; a reply to nothing waiting (timed out) is dropped. */
  settleReply(reply: IpcReply): void {
    const entry = this.waiting.get(reply.id);
    if (entry === undefined) return;
    this.settle(reply.id, () =>
      reply.ok ? entry.resolve(reply.value) : entry.reject(new Error(reply.error)),
    );
  }

  /** Rejects every waiting request (the channel closed). */
  failAll(reason: string): void {
    for (const [id, entry] of [...this.waiting]) this.settle(id, () => entry.reject(new Error(reason)));
  }

  private settle(id: number, run: () => void): void {
    const entry = this.waiting.get(id);
    if (entry === undefined) return;
    this.waiting.delete(id);
    clearTimeout(entry.timer);
    run();
  }
}

/** Answers one request with what `handle` resolves to (or its error's message) through `send`. */
export async function answer(
  request: IpcRequest,
  handle: (request: IpcRequest) => Promise<unknown>,
  send: (reply: IpcReply) => void,
): Promise<void> {
  let reply: IpcReply;
  try {
    reply = { kind: 'reply', id: request.id, ok: true, value: await handle(request) };
  } catch (err) {
    reply = {
      kind: 'reply',
      id: request.id,
      ok: false,
      error: err instanceof Error ? err.message : String(err),
    };
  }
  try {
    send(reply);
  } catch {
    // The asker is gone: nobody waits for the answer.
  }
}

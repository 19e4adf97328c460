// The registry port: what a Worker's heartbeat publisher and a Coordinator's watcher need from the
// Worker registry, independent of where it lives. Two implementations:
//   - etcd (etcd-registry-writer.ts / etcd-registry-reader.ts): distributed mode, docs/architecture.md § etcd
//     keys; a key `<prefix><workerAddr>` holds the heartbeat JSON under a lease.
//   - in-process (in-process-registry.ts): `blockx up`, the registry in its process; a Worker in a child
//     process of it writes through ipc-registry.ts.
//
// Values travel raw (string or bytes) from reader to consumer: the Coordinator trusts nothing it reads and
// parses every value itself (contracts/heartbeat.ts), skipping garbage with a warning.

import type { WorkerHeartbeat } from '../../contracts/heartbeat.js';

/**
 * Publishes one Worker's heartbeat. A writer is a session: in etcd, one lease; closing it ends the
 * session and removes every key it published (lease revoke), just as a crash would after the lease TTL.
 */
export interface WorkerRegistryWriter {
  /** Puts `<prefix><heartbeat.workerAddr>` = heartbeat JSON, bound to this session. */
  publish(prefix: string, heartbeat: WorkerHeartbeat): Promise<void>;
  /** Deletes `<prefix><workerAddr>` now. Deleting a missing key is not an error. */
  remove(prefix: string, workerAddr: string): Promise<void>;
  /** Ends the session: its keys disappear. Idempotent. */
  close(): Promise<void>;
}

/** One key and its raw value as read from the registry. */
export interface RegistryKeyValue {
  readonly key: string;
  readonly value: string | Uint8Array;
  /**
   * The etcd lease the key is bound to, as etcd reports it (decimal text; "0" = no lease). Absent when
   * the backend has no leases (the in-process registry). Every real Worker writes under a lease, so a
   * key with lease "0" was written by something else and is ignored (docs/security.md § The registry).
   */
  readonly lease?: string;
}

/**
 * What a reader reports about one prefix. Per prefix the order is:
 *   list (put | delete)* [disconnected list reconnected (put | delete)*]*
 * A failed first list reports `disconnected` before any `list`. After `disconnected` the reader retries
 * on its own: it re-lists the prefix in full (nothing is lost, whatever happened to etcd meanwhile), then
 * reports `list` followed by `reconnected`.
 */
export type RegistryEvent =
  /** The prefix's complete contents now; replaces whatever the consumer held for it. */
  | {
      readonly type: 'list';
      readonly prefix: string;
      readonly entries: readonly RegistryKeyValue[];
      /** The registry revision the list was taken at (etcd), when the backend has one. */
      readonly revision?: string;
    }
  | {
      readonly type: 'put';
      readonly prefix: string;
      readonly key: string;
      readonly value: string | Uint8Array;
      /** As RegistryKeyValue.lease. */
      readonly lease?: string;
    }
  | { readonly type: 'delete'; readonly prefix: string; readonly key: string }
  /** The prefix is no longer watched; its contents may be stale until the next `list`. */
  | { readonly type: 'disconnected'; readonly prefix: string; readonly reason: string }
  /** The prefix is watched again (always right after its fresh `list`). */
  | { readonly type: 'reconnected'; readonly prefix: string };

export type RegistryEventListener = (event: RegistryEvent) => void;

/** A running list+watch of some prefixes. */
export interface RegistryWatch {
  /** Stops watching; no event is delivered after the returned promise resolves. Idempotent. */
  close(): Promise<void>;
}

export interface WorkerRegistryReader {
  /** Lists and then watches each prefix; events arrive asynchronously, never during this call. */
  watch(prefixes: readonly string[], listener: RegistryEventListener): RegistryWatch;
}

/** A short, loggable description of an unknown error value. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

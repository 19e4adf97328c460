// One gRPC channel per address, shared by every client stub that talks to it (WorkerService,
// CoordinatorService, CoordinatorAdminService), created on first use and closed by close(). A channel is
// one HTTP/2 connection that multiplexes all calls, so thousands of concurrent tasks cost a handful of
// connections, not thousands.
import * as grpc from '@grpc/grpc-js';
import { CLIENT_CHANNEL_OPTIONS } from '../grpc/channel-options.js';
import {
  CoordinatorAdminServiceClient,
  CoordinatorJobsServiceClient,
  CoordinatorServiceClient,
  WorkerServiceClient,
} from '../grpc/proto.js';
import { channelCredentials } from '../grpc/tls.js';
import type { TlsMaterial } from '../kernel/tls-files.js';

type Kind = 'worker' | 'coordinator' | 'admin' | 'jobs';
type StubOf<K extends Kind> = K extends 'worker'
  ? WorkerServiceClient
  : K extends 'coordinator'
    ? CoordinatorServiceClient
    : K extends 'jobs'
      ? CoordinatorJobsServiceClient
      : CoordinatorAdminServiceClient;

const CTORS = {
  worker: WorkerServiceClient,
  coordinator: CoordinatorServiceClient,
  admin: CoordinatorAdminServiceClient,
  jobs: CoordinatorJobsServiceClient,
} as const;

export class ChannelPool {
  private readonly channels = new Map<string, grpc.Channel>();
  private readonly stubs = new Map<string, grpc.Client>();
  private closed = false;

  private readonly credentials: grpc.ChannelCredentials;

  /** `tls`: mutual TLS to every address (docs/security.md § TLS and authentication); plaintext without. */
  constructor(
    private readonly options: grpc.ChannelOptions = {},
    tls?: TlsMaterial,
  ) {
    this.credentials = channelCredentials(tls);
  }

  worker(address: string): WorkerServiceClient {
    return this.stub('worker', address);
  }

  coordinator(address: string): CoordinatorServiceClient {
    return this.stub('coordinator', address);
  }

  admin(address: string): CoordinatorAdminServiceClient {
    return this.stub('admin', address);
  }

  /** CoordinatorJobsService (backfill progress reports, docs/dashboard-data.md). */
  jobs(address: string): CoordinatorJobsServiceClient {
    return this.stub('jobs', address);
  }

  /** Addresses with an open channel (for tests and diagnostics). */
  get addresses(): readonly string[] {
    return [...this.channels.keys()];
  }

  close(): void {
    this.closed = true;
    for (const channel of this.channels.values()) channel.close();
    this.channels.clear();
    this.stubs.clear();
  }

  private stub<K extends Kind>(kind: K, address: string): StubOf<K> {
    if (this.closed) throw new Error('the client is closed');
    const key = `${kind} ${address}`;
    let stub = this.stubs.get(key);
    if (stub === undefined) {
      const channelOverride = this.channel(address);
      const Ctor = CTORS[kind] as unknown as new (
        address: string,
        credentials: grpc.ChannelCredentials,
        options: grpc.ClientOptions,
      ) => grpc.Client;
      stub = new Ctor(address, this.credentials, { channelOverride });
      this.stubs.set(key, stub);
    }
    return stub as StubOf<K>;
  }

  private channel(address: string): grpc.Channel {
    let channel = this.channels.get(address);
    if (channel === undefined) {
      channel = new grpc.Channel(address, this.credentials, {
        ...CLIENT_CHANNEL_OPTIONS,
        ...this.options,
      });
      this.channels.set(address, channel);
    }
    return channel;
  }
}

// grpc.health.v1.Health for every BlockX server, on top of the `grpc-health-check` package.
//
// createHealth() registers the given service names plus the overall server status "" (the protocol's
// convention), all NOT_SERVING until the app says otherwise: a Worker turns SERVING once its Executor
// heartbeats, a Coordinator once its first worker view is built; both turn NOT_SERVING while draining.
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation, service as healthServiceDefinition } from 'grpc-health-check';
import type { ServingStatus } from 'grpc-health-check';
import { HealthServiceUnknownError } from './errors.js';

/** The overall server status, by the health protocol's convention. */
export const OVERALL_SERVICE = '';

export interface Health {
  /** Flips one declared service (or OVERALL_SERVICE) between SERVING and NOT_SERVING. */
  setServing(service: string, serving: boolean): void;
  /** Flips every declared service and the overall status at once. */
  setAllServing(serving: boolean): void;
  /** The current status of a declared service, or undefined for an unknown name. */
  statusOf(service: string): ServingStatus | undefined;
  /** Registers grpc.health.v1.Health (Check, Watch, List) on the server. */
  addToServer(server: grpc.Server): void;
}

export function createHealth(services: readonly string[]): Health {
  const names = [...new Set([OVERALL_SERVICE, ...services])];
  const statuses = new Map<string, ServingStatus>(names.map((n) => [n, 'NOT_SERVING']));
  const impl = new HealthImplementation(Object.fromEntries(statuses));

  const set = (service: string, serving: boolean): void => {
    if (!statuses.has(service)) throw new HealthServiceUnknownError(service, names);
    const status: ServingStatus = serving ? 'SERVING' : 'NOT_SERVING';
    statuses.set(service, status);
    impl.setStatus(service, status);
  };

  return {
    setServing: set,
    setAllServing(serving) {
      for (const name of names) set(name, serving);
    },
    statusOf: (service) => statuses.get(service),
    addToServer: (server) => impl.addToServer(server),
  };
}

/** Status values a Check or Watch response can carry. */
export type HealthStatus = ServingStatus | 'SERVICE_UNKNOWN';

interface HealthCheckResponse {
  status: HealthStatus;
}

export interface HealthClient extends grpc.Client {
  check(
    request: { service: string },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<HealthCheckResponse>,
  ): grpc.ClientUnaryCall;
  watch(
    request: { service: string },
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<HealthCheckResponse>;
}

/** Client constructor for grpc.health.v1.Health: `new HealthClient(addr, credentials, options)`. */
export const HealthClient = grpc.makeClientConstructor(
  healthServiceDefinition as unknown as grpc.ServiceDefinition,
  'grpc.health.v1.Health',
) as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => HealthClient;

/**
 * One Health.Check call. Resolves with the service's status; rejects with the ServiceError (NOT_FOUND
 * for an undeclared service, UNAVAILABLE when nothing listens, DEADLINE_EXCEEDED after `timeoutMs`).
 */
export function checkHealth(client: HealthClient, service: string, timeoutMs: number): Promise<HealthStatus> {
  return new Promise((resolve, reject) => {
    client.check({ service }, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
      if (err) reject(err);
      else resolve(res?.status ?? 'UNKNOWN');
    });
  });
}

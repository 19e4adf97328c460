// Loads the BlockX protos once and exposes typed service definitions and client constructors.
//
// Decoding options (the same ones scripts/gen-proto.mjs passes to proto-loader-gen-types, so the
// generated `__Output` types describe exactly what handlers and clients receive):
//   keepCase: false  fields are camelCase in JS (`taskId`, `functionCallConfig`); the wire keeps snake_case.
//   longs: Number    int64 fields (ttl_ms, task_timeout_ms, timestamp_ms) are milliseconds, far below 2^53,
//                    so plain numbers are exact and spare every caller a Long/string conversion.
//   enums: String    enums decode to their names ('TASK_STATE_RUNNING'); numbers are accepted on input.
//   bytes: Buffer    `bytes` fields (JSON configs and results) decode to Buffers.
//   defaults: true   omitted scalars decode to their zero value, omitted messages to null.
//   oneofs: true     (no oneofs today; set so that a future oneof decodes the same in types and at runtime).
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Options, PackageDefinition } from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import type { ProtoGrpcType as WorkerProto } from '../generated/proto/worker.js';
import type { ProtoGrpcType as CoordinatorProto } from '../generated/proto/coordinator.js';
import type { ProtoGrpcType as BundleCoordinatorProto } from '../generated/proto/bundle_coordinator.js';
import type { ProtoGrpcType as CoordinatorAdminProto } from '../generated/proto/admin.js';
import type { ProtoGrpcType as WorkerAdminProto } from '../generated/proto/worker_admin.js';
import type { ProtoGrpcType as CoordinatorJobsProto } from '../generated/proto/jobs.js';
import type {
  WorkerServiceClient as WorkerServiceClientType,
  WorkerServiceDefinition,
  WorkerServiceHandlers,
} from '../generated/proto/blockx/worker/v1/WorkerService.js';
import type {
  CoordinatorServiceClient as CoordinatorServiceClientType,
  CoordinatorServiceDefinition,
  CoordinatorServiceHandlers,
} from '../generated/proto/blockx/coordinator/v1/CoordinatorService.js';
import type {
  BundleCoordinatorServiceClient as BundleCoordinatorServiceClientType,
  BundleCoordinatorServiceDefinition,
  BundleCoordinatorServiceHandlers,
} from '../generated/proto/blockx/bundlecoordinator/v1/BundleCoordinatorService.js';
import type {
  CoordinatorAdminServiceClient as CoordinatorAdminServiceClientType,
  CoordinatorAdminServiceDefinition,
  CoordinatorAdminServiceHandlers,
} from '../generated/proto/blockx/coordinator/v1/CoordinatorAdminService.js';
import type {
  WorkerAdminServiceClient as WorkerAdminServiceClientType,
  WorkerAdminServiceDefinition,
  WorkerAdminServiceHandlers,
} from '../generated/proto/blockx/worker/v1/WorkerAdminService.js';
import type {
  CoordinatorJobsServiceClient as CoordinatorJobsServiceClientType,
  CoordinatorJobsServiceDefinition,
  CoordinatorJobsServiceHandlers,
} from '../generated/proto/blockx/coordinator/v1/CoordinatorJobsService.js';

/**
 * The package's `proto/` folder. This file is two levels under the package root both as
 * src/grpc/proto.ts (vitest, tsx) and as dist/grpc/proto.js (after `tsc`), so one relative URL serves both.
 */
export const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));

/** Proto files relative to PROTO_DIR (the same list scripts/gen-proto.mjs generates types for). */
export const PROTO_FILES = [
  'blockx/worker/v1/worker.proto',
  'blockx/coordinator/v1/coordinator.proto',
  'blockx/bundlecoordinator/v1/bundle_coordinator.proto',
  'blockx/coordinator/v1/admin.proto',
  'blockx/worker/v1/worker_admin.proto',
  'blockx/coordinator/v1/jobs.proto',
] as const;

/** See the header comment; a unit test pins these against the generator flags. */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
} as const satisfies Options;

/** Fully qualified service names, as used in method paths and by grpc.health.v1.Health. */
export const SERVICE_NAMES = {
  worker: 'blockx.worker.v1.WorkerService',
  coordinator: 'blockx.coordinator.v1.CoordinatorService',
  bundleCoordinator: 'blockx.bundlecoordinator.v1.BundleCoordinatorService',
  coordinatorAdmin: 'blockx.coordinator.v1.CoordinatorAdminService',
  workerAdmin: 'blockx.worker.v1.WorkerAdminService',
  coordinatorJobs: 'blockx.coordinator.v1.CoordinatorJobsService',
} as const;

/** The raw proto-loader package definition of every proto in PROTO_FILES (loaded once, at import). */
export const packageDefinition: PackageDefinition = loadSync([...PROTO_FILES], {
  ...PROTO_LOADER_OPTIONS,
  includeDirs: [PROTO_DIR],
});

// The generated ProtoGrpcType interfaces describe what loadPackageDefinition returns for these files.
const loaded = grpc.loadPackageDefinition(packageDefinition) as unknown as WorkerProto &
  CoordinatorProto &
  BundleCoordinatorProto &
  CoordinatorAdminProto &
  WorkerAdminProto &
  CoordinatorJobsProto;

const workerCtor = loaded.blockx.worker.v1.WorkerService;
const coordinatorCtor = loaded.blockx.coordinator.v1.CoordinatorService;
const bundleCoordinatorCtor = loaded.blockx.bundlecoordinator.v1.BundleCoordinatorService;
const coordinatorAdminCtor = loaded.blockx.coordinator.v1.CoordinatorAdminService;
const workerAdminCtor = loaded.blockx.worker.v1.WorkerAdminService;
const coordinatorJobsCtor = loaded.blockx.coordinator.v1.CoordinatorJobsService;

/** `new WorkerServiceClient(addr, credentials, options)`; see src/grpc/clients.ts for the usual setup. */
export const WorkerServiceClient = workerCtor;
export type WorkerServiceClient = WorkerServiceClientType;
export const CoordinatorServiceClient = coordinatorCtor;
export type CoordinatorServiceClient = CoordinatorServiceClientType;
export const BundleCoordinatorServiceClient = bundleCoordinatorCtor;
export type BundleCoordinatorServiceClient = BundleCoordinatorServiceClientType;
/** Read-only admin view of a Coordinator (proto/blockx/coordinator/v1/admin.proto; `blockx status`). */
export const CoordinatorAdminServiceClient = coordinatorAdminCtor;
export type CoordinatorAdminServiceClient = CoordinatorAdminServiceClientType;
/** Read-only recent tasks of a Worker (proto/blockx/worker/v1/worker_admin.proto; the dashboard feed). */
export const WorkerAdminServiceClient = workerAdminCtor;
export type WorkerAdminServiceClient = WorkerAdminServiceClientType;
/** Backfill progress reports to a Coordinator (proto/blockx/coordinator/v1/jobs.proto). */
export const CoordinatorJobsServiceClient = coordinatorJobsCtor;
export type CoordinatorJobsServiceClient = CoordinatorJobsServiceClientType;

/** Service definitions for `server.addService(definition, handlers)`. */
/**
 * What a streaming handler receives in place of a message protobuf cannot decode. grpc-js would answer
 * such a message with INTERNAL from inside the call, after the handler had already written (a RunTasks
 * stream with one good request then an undecodable one hung to its deadline, found by
 * test/process/fuzz-worker-rpc.test.ts); the handler instead ends the stream itself with
 * INVALID_ARGUMENT (docs/security.md § Input bounds).
 */
export const UNDECODABLE_MESSAGE: { readonly undecodable: true } = Object.freeze({ undecodable: true });

/** `method` with a request decoder that returns UNDECODABLE_MESSAGE instead of throwing. */
function tolerantRequests<M extends { requestDeserialize: (bytes: Buffer) => unknown }>(method: M): M {
  const decode = method.requestDeserialize;
  return {
    ...method,
    requestDeserialize: (bytes: Buffer): unknown => {
      try {
        return decode(bytes);
      } catch {
        return UNDECODABLE_MESSAGE;
      }
    },
  };
}

export const workerServiceDefinition: WorkerServiceDefinition = {
  ...workerCtor.service,
  RunTasks: tolerantRequests(workerCtor.service.RunTasks),
};
export const coordinatorServiceDefinition: CoordinatorServiceDefinition = coordinatorCtor.service;
export const bundleCoordinatorServiceDefinition: BundleCoordinatorServiceDefinition =
  bundleCoordinatorCtor.service;
export const coordinatorAdminServiceDefinition: CoordinatorAdminServiceDefinition =
  coordinatorAdminCtor.service;
export const workerAdminServiceDefinition: WorkerAdminServiceDefinition = workerAdminCtor.service;
export const coordinatorJobsServiceDefinition: CoordinatorJobsServiceDefinition = coordinatorJobsCtor.service;

export type {
  WorkerServiceHandlers,
  CoordinatorServiceHandlers,
  BundleCoordinatorServiceHandlers,
  CoordinatorAdminServiceHandlers,
  WorkerAdminServiceHandlers,
  CoordinatorJobsServiceHandlers,
};

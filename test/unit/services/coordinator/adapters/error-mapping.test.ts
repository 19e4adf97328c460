// The two directions of the Coordinator's error mapping, pinned by tables:
//   coordCodeToGRPC   business code → gRPC status (the ONE mapping, for every service the Coordinator
//                     serves; docs/coordinator.md § Errors)
//   grpcErrToSlotError gRPC status (+ business code, details) → SlotError code and MayHaveAllocated
// and the property that the second inverts the first on every code a Worker answers with.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  coordCodeToGRPC,
  domainStatusOf,
  toServiceError,
  type CoordinatorStatusCode,
} from '../../../../../src/services/coordinator/adapters/grpc-status.js';
import {
  FunctionsStoreError,
  FunctionsStoreErrorCode,
} from '../../../../../src/services/functions-store/errors.js';
import {
  grpcErrToSlotError,
  repliesOfGrants,
} from '../../../../../src/services/coordinator/adapters/worker-rpc-client.js';
import {
  BackfillReportError,
  BackfillReportErrorCode,
  CoordinatorError,
  CoordinatorErrorCode,
} from '../../../../../src/services/coordinator/core/errors.js';
import { BLOCKX_ERROR_CODE_KEY, businessCodeOf, grpcStatusError } from '../../../../../src/grpc/status.js';
import { MAX_STATUS_MESSAGE_BYTES } from '../../../../../src/kernel/input-bounds.js';
import {
  taskErrorToWire,
  workerCodeToGRPC,
  workerErrorStatus,
} from '../../../../../src/services/worker/adapters/grpc/error-status.js';
import { WorkerAdmissionError } from '../../../../../src/services/worker/core/errors.js';

const S = grpc.status;

describe('coordCodeToGRPC', () => {
  // A Record of the whole union: leaving out a code of any of the three families does not compile.
  const table: Record<CoordinatorStatusCode, grpc.status> = {
    // reservations
    InvalidArgument: S.INVALID_ARGUMENT,
    Unavailable: S.UNAVAILABLE,
    NoExecutableSlot: S.RESOURCE_EXHAUSTED,
    AllCandidatesRejected: S.RESOURCE_EXHAUSTED,
    SlotUncertain: S.ABORTED,
    NoSlot: S.RESOURCE_EXHAUSTED,
    InvalidSlot: S.FAILED_PRECONDITION,
    NotFound: S.NOT_FOUND,
    Internal: S.INTERNAL,
    InvalidConfig: S.INTERNAL,
    // the functions store (CoordinatorAdminService)
    BUNDLE_EMPTY: S.INVALID_ARGUMENT,
    BUNDLE_TOO_LARGE: S.INVALID_ARGUMENT,
    BUNDLE_CORRUPT: S.INVALID_ARGUMENT,
    BUNDLE_TAMPERED: S.INVALID_ARGUMENT,
    VERSION_AMBIGUOUS: S.INVALID_ARGUMENT,
    VERSION_UNKNOWN: S.NOT_FOUND,
    NO_DEPLOYMENT: S.FAILED_PRECONDITION,
    STORE_CONFLICT: S.ABORTED,
    BUNDLE_UNTRUSTED: S.INTERNAL, // the Workers' check of a stored bundle
    FOLDER_UNREADABLE: S.INTERNAL, // a client-side error: never sent by a coordinator
    // backfill job reports (CoordinatorJobsService); InvalidArgument is above
    TooManyJobs: S.RESOURCE_EXHAUSTED,
    NotOwner: S.PERMISSION_DENIED,
  };

  it('covers every code of the three tables', () => {
    const codes = [
      ...Object.values(CoordinatorErrorCode),
      ...Object.values(FunctionsStoreErrorCode),
      ...Object.values(BackfillReportErrorCode),
    ];
    expect(codes.filter((c) => !(c in table))).toEqual([]);
  });

  it.each(Object.entries(table))('%s → %i', (code, status) => {
    expect(coordCodeToGRPC(code as CoordinatorStatusCode)).toBe(status);
  });

  it.each([
    ['a reservation error', new CoordinatorError(CoordinatorErrorCode.NoSlot, 'full'), S.RESOURCE_EXHAUSTED],
    ['a store error', new FunctionsStoreError('VERSION_UNKNOWN', 'no such version'), S.NOT_FOUND],
    ['a job report error', new BackfillReportError('NotOwner', 'job_id', 'not yours'), S.PERMISSION_DENIED],
  ])('domainStatusOf: %s keeps its code and message', (_what, err, status) => {
    expect(domainStatusOf(err)).toEqual({ status, code: err.code, message: err.message });
  });

  it('domainStatusOf: an error of no domain is none, even with a code of one', () => {
    expect(domainStatusOf(new Error('bug'))).toBeUndefined();
    expect(domainStatusOf(Object.assign(new Error('x'), { code: 'NoSlot' }))).toBeUndefined();
    expect(domainStatusOf('NoSlot')).toBeUndefined();
  });

  it('toServiceError carries the business code in the blockx-error-code trailer', () => {
    const err = toServiceError(
      new CoordinatorError(CoordinatorErrorCode.SlotUncertain, 'unable to confirm slot reservation'),
    );
    expect(err.code).toBe(S.ABORTED);
    expect(err.details).toBe('unable to confirm slot reservation');
    expect(err.metadata.get(BLOCKX_ERROR_CODE_KEY)).toEqual(['SlotUncertain']);
  });

  it('toServiceError caps the status message (docs/security.md § Input bounds)', () => {
    // e.g. a Worker's rejection text relayed verbatim: it must stay sendable as an HTTP/2 trailer.
    const err = toServiceError(new CoordinatorError(CoordinatorErrorCode.NoSlot, 'y'.repeat(200_000)));
    expect(err.code).toBe(S.RESOURCE_EXHAUSTED);
    expect(err.details).toBe(`${'y'.repeat(MAX_STATUS_MESSAGE_BYTES)}…`);
    expect(err.message).toBe(err.details);
  });

  it('toServiceError hides unexpected errors behind Internal', () => {
    const err = toServiceError(new Error('secret stack detail'));
    expect(err.code).toBe(S.INTERNAL);
    expect(err.details).not.toMatch(/secret/);
    expect(businessCodeOf(err)).toBe('Internal');
  });
});

describe('grpcErrToSlotError', () => {
  const cases: [string, grpc.ServiceError | Error, string, 'rejected' | 'transport' | 'uncertain'][] = [
    [
      'InvalidArgument from the worker',
      grpcStatusError(S.INVALID_ARGUMENT, 'ttl_ms', 'InvalidArgument'),
      'InvalidArgument',
      'rejected',
    ],
    [
      'ResourceExhausted (pool full)',
      grpcStatusError(S.RESOURCE_EXHAUSTED, 'no free slot', 'NoSlot'),
      'NoSlot',
      'rejected',
    ],
    [
      'FailedPrecondition',
      grpcStatusError(S.FAILED_PRECONDITION, 'slot refused', 'InvalidSlot'),
      'InvalidSlot',
      'rejected',
    ],
    ['NotFound', grpcStatusError(S.NOT_FOUND, 'unknown task', 'NotFound'), 'NotFound', 'rejected'],
    [
      'Unavailable sent by the worker',
      grpcStatusError(S.UNAVAILABLE, 'draining', 'Unavailable'),
      'Unavailable',
      'rejected',
    ],
    [
      'Unavailable of a draining worker (its own mapping)',
      workerCodeToGRPC(WorkerAdmissionError.unavailable('t', 'Draining')),
      'Unavailable',
      'rejected',
    ],
    [
      'Unavailable of a worker whose executor restarts (its own mapping): busy, like a full pool',
      workerCodeToGRPC(WorkerAdmissionError.unavailable('t', 'NotReady')),
      'NoSlot',
      'rejected',
    ],
    [
      'connection refused',
      grpcStatusError(
        S.UNAVAILABLE,
        'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1',
      ),
      'Unavailable',
      'transport',
    ],
    [
      'stream refused',
      grpcStatusError(S.UNAVAILABLE, 'Stream refused by server'),
      'Unavailable',
      'transport',
    ],
    [
      'dropped connection',
      grpcStatusError(S.UNAVAILABLE, 'Connection dropped'),
      'SlotUncertain',
      'uncertain',
    ],
    ['reset mid-call', grpcStatusError(S.UNAVAILABLE, 'read ECONNRESET'), 'SlotUncertain', 'uncertain'],
    ['deadline', grpcStatusError(S.DEADLINE_EXCEEDED, 'Deadline exceeded'), 'SlotUncertain', 'uncertain'],
    ['cancelled', grpcStatusError(S.CANCELLED, 'Cancelled on client'), 'SlotUncertain', 'uncertain'],
    ['aborted', grpcStatusError(S.ABORTED, 'aborted'), 'SlotUncertain', 'uncertain'],
    ['internal', grpcStatusError(S.INTERNAL, 'boom'), 'SlotUncertain', 'uncertain'],
    ['unknown', grpcStatusError(S.UNKNOWN, 'handler threw'), 'SlotUncertain', 'uncertain'],
    ['data loss', grpcStatusError(S.DATA_LOSS, '?'), 'SlotUncertain', 'uncertain'],
    ['unimplemented', grpcStatusError(S.UNIMPLEMENTED, 'no such method'), 'Internal', 'rejected'],
    ['permission denied', grpcStatusError(S.PERMISSION_DENIED, 'no'), 'Internal', 'rejected'],
    ['not a gRPC error', new Error('invalid address'), 'Internal', 'transport'],
  ];

  it.each(cases)('%s', (_name, err, code, kind) => {
    const e = grpcErrToSlotError(err);
    expect([e.code, e.kind]).toEqual([code, kind]);
    expect(e.mayHaveAllocated).toBe(kind === 'uncertain');
  });

  it('classifies a per-id TaskError of RequestTaskSlots as the unary answer (executor restarting: NoSlot)', () => {
    const taskError = (reason: 'NotReady' | 'Draining') => {
      const s = workerErrorStatus(WorkerAdmissionError.unavailable('t', reason));
      const wire = taskErrorToWire(s);
      return { code: wire.code ?? '', status: s.status, message: s.message };
    };
    const codes = (['NotReady', 'Draining'] as const).map((reason) => {
      const [r] = repliesOfGrants(
        ['t'],
        [{ taskId: 't', slotId: '', state: 'TASK_STATE_UNSPECIFIED', error: taskError(reason) }],
      );
      return r!.ok ? 'granted' : r!.error.code;
    });
    expect(codes).toEqual(['NoSlot', 'Unavailable']);
  });

  it('inverts coordCodeToGRPC on every code a worker answers RequestTaskSlot with', () => {
    const workerCodes = [
      'InvalidArgument',
      'NoSlot',
      'InvalidSlot',
      'NotFound',
      'Unavailable',
      'SlotUncertain',
    ] as const;
    for (const code of workerCodes) {
      const wire = grpcStatusError(coordCodeToGRPC(code), `worker says ${code}`, code);
      expect(grpcErrToSlotError(wire).code, code).toBe(code);
    }
  });
});

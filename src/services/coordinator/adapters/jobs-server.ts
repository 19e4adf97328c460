// CoordinatorJobsService (proto/blockx/coordinator/v1/jobs.proto): backfill clients report their jobs'
// progress here, for the dashboard (docs/dashboard-data.md § Backfill jobs). The table and its bounds
// are the pure core/backfill-jobs.ts; this file decodes, stamps the Coordinator's clock, and maps a
// refusal to its status (`jobsErrorStatus`, this service's one error mapping). Nothing here touches
// routing.

import * as grpc from '@grpc/grpc-js';
import { callerIdentity } from '../../../grpc/peer-identity.js';
import type { CoordinatorJobsServiceHandlers } from '../../../grpc/proto.js';
import { silentLogger, describeError } from '../../registry/registry-port.js';
import type { Logger } from '../../registry/registry-port.js';
import { BackfillReportError, type BackfillJobs } from '../core/backfill-jobs.js';
import type { BackfillJobView } from '../../../contracts/dashboard.js';

export interface JobsServiceOptions {
  /** UTC ms (default Date.now). */
  readonly clock?: () => number;
  readonly logger?: Logger;
}

/** What the dashboard feed reads: the jobs reported recently, most recent first. */
export interface BackfillJobsReader {
  list(now: number): readonly BackfillJobView[];
}

/** The one mapping of this service's errors to gRPC statuses. */
export function jobsErrorStatus(err: unknown): Pick<grpc.ServiceError, 'code' | 'details'> {
  if (err instanceof BackfillReportError) {
    switch (err.code) {
      case 'InvalidArgument':
        return { code: grpc.status.INVALID_ARGUMENT, details: err.message };
      case 'TooManyJobs':
        return { code: grpc.status.RESOURCE_EXHAUSTED, details: err.message };
      case 'NotOwner':
        return { code: grpc.status.PERMISSION_DENIED, details: err.message };
      default: {
        const unreachable: never = err.code;
        return { code: grpc.status.INTERNAL, details: `unknown code ${String(unreachable)}` };
      }
    }
  }
  return { code: grpc.status.INTERNAL, details: 'ReportBackfillProgress failed' };
}

export function jobsServiceHandlers(
  jobs: BackfillJobs,
  opts: JobsServiceOptions = {},
): CoordinatorJobsServiceHandlers {
  const clock = opts.clock ?? Date.now;
  const logger = opts.logger ?? silentLogger;
  return {
    ReportBackfillProgress(call, callback) {
      try {
        // The entry belongs to whoever reported it first (core/backfill-jobs.ts).
        jobs.report(call.request, clock(), callerIdentity(call));
      } catch (err) {
        const status = jobsErrorStatus(err);
        if (status.code === grpc.status.INTERNAL) {
          logger.error(
            { rpc: 'ReportBackfillProgress', err: describeError(err) },
            'ReportBackfillProgress failed',
          );
        } else {
          logger.debug({ rpc: 'ReportBackfillProgress', code: grpc.status[status.code] }, status.details);
        }
        callback(status);
        return;
      }
      callback(null, { retainMs: jobs.retainMs });
    },
  };
}

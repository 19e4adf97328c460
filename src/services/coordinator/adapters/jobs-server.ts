// CoordinatorJobsService (proto/blockx/coordinator/v1/jobs.proto): backfill clients report their jobs'
// progress here, for the dashboard (docs/dashboard-data.md § Backfill jobs). The table and its bounds
// are the pure core/backfill-jobs.ts; this file decodes, stamps the Coordinator's clock, and maps a
// refusal to its status (through the Coordinator's one error mapping, grpc-status.ts). Nothing here touches
// routing.

import { type ServiceLogger, silentLogger } from '../../../kernel/observability/service-logger.js';
import * as grpc from '@grpc/grpc-js';
import { callerIdentity } from '../../../grpc/peer-identity.js';
import type { CoordinatorJobsServiceHandlers } from '../../../grpc/proto.js';
import { describeError } from '../../registry/registry-port.js';
import type { BackfillJobs } from '../core/backfill-jobs.js';
import { grpcStatusError } from '../../../grpc/status.js';
import { domainStatusOf } from './grpc-status.js';
import type { BackfillJobView } from '../../../contracts/dashboard.js';

export interface JobsServiceOptions {
  /** UTC ms (default Date.now). */
  readonly clock?: () => number;
  readonly logger?: ServiceLogger;
}

/** What the dashboard feed reads: the jobs reported recently, most recent first. */
export interface BackfillJobsReader {
  list(now: number): readonly BackfillJobView[];
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
        const known = domainStatusOf(err);
        if (known === undefined) {
          logger.error(
            { rpc: 'ReportBackfillProgress', err: describeError(err) },
            'ReportBackfillProgress failed',
          );
          callback(grpcStatusError(grpc.status.INTERNAL, 'ReportBackfillProgress failed'));
        } else {
          logger.debug({ rpc: 'ReportBackfillProgress', code: grpc.status[known.status] }, known.message);
          callback(grpcStatusError(known.status, known.message, known.code));
        }
        return;
      }
      callback(null, { retainMs: jobs.retainMs });
    },
  };
}

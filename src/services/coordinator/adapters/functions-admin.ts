// The functions part of CoordinatorAdminService (proto/blockx/coordinator/v1/admin.proto;
// docs/functions-deploy.md § blockx up without etcd): deploy / use / list on the store the Coordinator
// holds for an in-process cluster. A Coordinator without a store (every etcd cluster: `blockx functions`
// writes etcd itself) answers FAILED_PRECONDITION saying so. A store error becomes its status through the
// Coordinator's one mapping (grpc-status.ts); the store's code travels in the blockx error-code metadata.

import type { ServiceLogger } from '../../../kernel/observability/service-logger.js';
import * as grpc from '@grpc/grpc-js';
import type { FunctionsChange } from '../../../generated/proto/blockx/coordinator/v1/FunctionsChange.js';
import type { FunctionsVersion } from '../../../generated/proto/blockx/coordinator/v1/FunctionsVersion.js';
import type { CoordinatorAdminServiceHandlers } from '../../../grpc/proto.js';
import { grpcStatusError } from '../../../grpc/status.js';
import { decodeBundle, isVersionId } from '../../functions-store/bundle.js';
import { MAX_BUNDLE_STORED_BYTES } from '../../functions-store/bundle-limits.js';
import { FunctionsStoreError, FunctionsStoreErrorCode as Code } from '../../functions-store/errors.js';
import type { FunctionsStore } from '../../functions-store/functions-store.js';
import type { VersionEntry } from '../../functions-store/version-index.js';
import { domainStatusOf } from './grpc-status.js';

type FunctionsHandlers = Pick<
  CoordinatorAdminServiceHandlers,
  'DeployFunctions' | 'UseFunctions' | 'ListFunctions'
>;

/** A store error as its status (grpc-status.ts, the Coordinator's one mapping); anything else INTERNAL. */
function toStatus(err: unknown, logger: ServiceLogger, rpc: string): grpc.ServiceError {
  const known = domainStatusOf(err);
  if (known !== undefined && known.status !== grpc.status.INTERNAL) {
    return grpcStatusError(known.status, known.message, known.code);
  }
  const message = err instanceof Error ? err.message : String(err);
  logger.error({ err: message, rpc }, 'functions admin call failed unexpectedly');
  return grpcStatusError(grpc.status.INTERNAL, `${rpc}: ${message}`);
}

const versionWire = (e: VersionEntry): FunctionsVersion => ({
  version: e.version,
  digest: e.digest,
  fileNames: [...e.fileNames],
  sourceBytes: e.sourceBytes,
  storedBytes: e.storedBytes,
  deployedAtMs: e.deployedAtMs,
});

export function functionsAdminHandlers(
  store: FunctionsStore | undefined,
  logger: ServiceLogger,
): FunctionsHandlers {
  const noStore = (): grpc.ServiceError =>
    grpcStatusError(
      grpc.status.FAILED_PRECONDITION,
      'this coordinator holds no functions store: with etcd, `blockx functions` writes etcd itself ' +
        '(--etcd / registry.etcd.endpoints); an in-process cluster needs functions.source: cluster',
    );
  const answer = <T>(
    rpc: string,
    work: (s: FunctionsStore) => Promise<T>,
    cb: grpc.sendUnaryData<T>,
  ): void => {
    if (store === undefined) {
      cb(noStore());
      return;
    }
    work(store).then(
      (res) => cb(null, res),
      (err: unknown) => cb(toStatus(err, logger, rpc)),
    );
  };
  return {
    DeployFunctions(call, callback) {
      answer(
        'DeployFunctions',
        async (s): Promise<FunctionsChange> => {
          const { bundle, version } = call.request;
          if (!isVersionId(version)) {
            throw new FunctionsStoreError(Code.BUNDLE_CORRUPT, 'version must be 16 hex digits');
          }
          if (bundle.length > MAX_BUNDLE_STORED_BYTES) {
            throw new FunctionsStoreError(
              Code.BUNDLE_TOO_LARGE,
              `the bundle is ${bundle.length} bytes; at most ${MAX_BUNDLE_STORED_BYTES} are accepted`,
            );
          }
          // The client's signature travels into the stored bundle; Workers check it (docs/functions-deploy.md
          // § Signed deploys).
          const decoded = decodeBundle(bundle, { version });
          const out = await s.deploy(
            decoded.files,
            decoded.signature ? { signature: decoded.signature } : {},
          );
          return {
            entry: versionWire(out.entry),
            changed: out.changed,
            newVersion: out.newVersion,
            previous: out.previous,
            pruned: [...out.pruned],
          };
        },
        callback,
      );
    },
    UseFunctions(call, callback) {
      answer(
        'UseFunctions',
        async (s): Promise<FunctionsChange> => {
          const out = await s.use(call.request.version);
          return {
            entry: versionWire(out.entry),
            changed: out.changed,
            newVersion: false,
            previous: out.previous,
            pruned: [],
          };
        },
        callback,
      );
    },
    ListFunctions(_call, callback) {
      answer(
        'ListFunctions',
        async (s) => {
          const index = await s.list();
          return { current: index.current, versions: index.versions.map(versionWire) };
        },
        callback,
      );
    },
  };
}

// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface FunctionsVersion {
  'version'?: (string);
  /**
   * The full SHA-256 the version is the prefix of.
   */
  'digest'?: (string);
  'fileNames'?: (string)[];
  'sourceBytes'?: (number | string | Long);
  'storedBytes'?: (number | string | Long);
  'deployedAtMs'?: (number | string | Long);
}

export interface FunctionsVersion__Output {
  'version': (string);
  /**
   * The full SHA-256 the version is the prefix of.
   */
  'digest': (string);
  'fileNames': (string)[];
  'sourceBytes': (number);
  'storedBytes': (number);
  'deployedAtMs': (number);
}

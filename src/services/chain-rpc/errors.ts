// Stable error codes of the RPC access layer (docs/ingest.md § Failure modes). Each key equals its code;
// test/unit/services/chain-rpc/errors.test.ts pins that. Every error names the source, the URL (credentials
// masked, ./url-mask.ts) and the JSON-RPC method; the message is for people, the fields for programs.
import { BlockxError } from '../../kernel/errors.js';

export const ChainRpcErrorCode = {
  /** Every attempt failed to connect (refused, reset, DNS). */
  UNREACHABLE: 'UNREACHABLE',
  /** Every attempt ran past the per-request timeout. */
  TIMEOUT: 'TIMEOUT',
  /** HTTP 429 on every attempt. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** Another HTTP status than 200 (5xx on every attempt, or a status not worth retrying). */
  HTTP_STATUS: 'HTTP_STATUS',
  /** A body that is not JSON-RPC, misses an answer, or fails validation. */
  BAD_RESPONSE: 'BAD_RESPONSE',
  /** The node answered with a JSON-RPC error. */
  RPC_ERROR: 'RPC_ERROR',
  /** The node does not serve the method (JSON-RPC -32601 or a "not supported" answer). */
  METHOD_NOT_SUPPORTED: 'METHOD_NOT_SUPPORTED',
  /** eth_chainId differs from the chain id the source is configured for. */
  WRONG_CHAIN: 'WRONG_CHAIN',
  /** The node has no block at that height (null). */
  BLOCK_NOT_FOUND: 'BLOCK_NOT_FOUND',
  /** A task names a source this process has no URL for (neither its config nor its environment). */
  SOURCE_NOT_DECLARED: 'SOURCE_NOT_DECLARED',
} as const;
export type ChainRpcErrorCode = (typeof ChainRpcErrorCode)[keyof typeof ChainRpcErrorCode];

export interface ChainRpcErrorFields {
  /** The source's name (`sources.<name>`, or `rpc` for `--rpc URL`). */
  readonly source: string;
  /** The URL the last attempt went to, credentials masked. */
  readonly url: string;
  /** The JSON-RPC method (several joined with `+` for a batch). */
  readonly method: string;
  /** Attempts made (HTTP requests). */
  readonly attempts?: number;
  /** Whether trying again later may work (the cluster's task retry uses it). */
  readonly retryable: boolean;
  readonly httpStatus?: number;
  readonly rpcCode?: number;
}

export class ChainRpcError extends BlockxError {
  readonly source: string;
  readonly url: string;
  readonly method: string;
  readonly attempts: number | undefined;
  readonly retryable: boolean;
  readonly httpStatus: number | undefined;
  readonly rpcCode: number | undefined;

  constructor(
    code: ChainRpcErrorCode,
    detail: string,
    fields: ChainRpcErrorFields,
    options?: { cause?: unknown },
  ) {
    const attempts =
      fields.attempts !== undefined && fields.attempts > 1 ? ` after ${fields.attempts} attempts` : '';
    super(code, `source ${fields.source} (${fields.url}) ${fields.method}: ${detail}${attempts}`, options);
    this.source = fields.source;
    this.url = fields.url;
    this.method = fields.method;
    this.attempts = fields.attempts;
    this.retryable = fields.retryable;
    this.httpStatus = fields.httpStatus;
    this.rpcCode = fields.rpcCode;
  }
}

/**
 * A task names a source this process has no URL for (docs/ingest.md § Where the URL lives). Not retryable:
 * the process's config and environment do not change under it (every Worker that ingests declares the source).
 */
export class SourceNotDeclaredError extends BlockxError {
  readonly source: string;
  readonly retryable = false;

  constructor(source: string, detail: string) {
    super(ChainRpcErrorCode.SOURCE_NOT_DECLARED, `source ${source}: ${detail}`);
    this.source = source;
  }
}

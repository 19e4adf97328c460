// A `sources.<name>` entry (its defaults from the config field table, src/kernel/config-fields/source-fields.ts)
// → the settings of the RPC client. The field table is the one place a default is written.
import { defaultSourceConfig } from '../../kernel/config-defaults.js';
import type { SourceConfig } from '../../kernel/config-types.js';
import type { RpcSourceSettings } from './adapters/rpc-client.js';

/** A source entry with every default filled (rpcUrl, fallbackUrl and chainId stay unset). */
export function defaultSource(): SourceConfig {
  return defaultSourceConfig();
}

/** The client settings of `source` named `name`; its rpcUrl must be set. */
export function rpcSettingsOf(
  name: string,
  source: SourceConfig & { readonly rpcUrl: string },
): RpcSourceSettings {
  return {
    name,
    urls: source.fallbackUrl === undefined ? [source.rpcUrl] : [source.rpcUrl, source.fallbackUrl],
    maxConcurrentRequests: source.maxConcurrentRequests,
    requestsPerSecond: source.requestsPerSecond,
    requestBurst: source.requestBurst,
    requestTimeoutMs: source.requestTimeoutMs,
    maxAttempts: source.maxAttempts,
    initialBackoffMs: source.initialBackoffMs,
    maxBackoffMs: source.maxBackoffMs,
    maxRetryAfterMs: source.maxRetryAfterMs,
  };
}

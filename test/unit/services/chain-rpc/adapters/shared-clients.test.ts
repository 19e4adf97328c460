// The process's sources (docs/ingest.md § Where the URL lives): a task names its source and this process
// finds the URL in its own declaration; the task's keyless URLs win; an undeclared source is a clear,
// non-retryable error. One client per source serves every task, whatever limits each carries: the last
// task's limits are in force for all.
import { afterEach, describe, expect, it } from 'vitest';
import {
  declareProcessSources,
  resolveSourceUrls,
  sharedBlockFetcher,
  type TaskSource,
} from '../../../../../src/services/chain-rpc/adapters/shared-clients.js';
import { SourceNotDeclaredError } from '../../../../../src/services/chain-rpc/errors.js';
import { defaultSourceConfig } from '../../../../../src/kernel/config-defaults.js';

const LIMITS = {
  maxConcurrentRequests: 4,
  requestsPerSecond: 10,
  requestTimeoutMs: 1_000,
  maxAttempts: 3,
  initialBackoffMs: 10,
  maxBackoffMs: 100,
  maxRetryAfterMs: 1_000,
};
const KEYED = 'https://user:SECRET0123456789@node.invalid/v3/abcdef0123456789abcdef';

afterEach(() => declareProcessSources({}));

describe('resolveSourceUrls', () => {
  it('finds a named source’s URLs (and fallback) in the process’s own declaration', () => {
    declareProcessSources({
      mainnet: { ...defaultSourceConfig(), rpcUrl: KEYED, fallbackUrl: 'http://127.0.0.1:9/' },
    });
    expect(resolveSourceUrls({ name: 'mainnet' })).toEqual([KEYED, 'http://127.0.0.1:9/']);
  });

  it('a task’s own URLs (given by --rpc) win over a declaration of the same name', () => {
    declareProcessSources({ rpc: { ...defaultSourceConfig(), rpcUrl: KEYED } });
    expect(resolveSourceUrls({ name: 'rpc', urls: ['http://127.0.0.1:8545'] })).toEqual([
      'http://127.0.0.1:8545',
    ]);
  });

  it('an undeclared source fails with SOURCE_NOT_DECLARED, naming where to declare it, not retryable', () => {
    declareProcessSources({
      other: { ...defaultSourceConfig(), rpcUrl: KEYED },
      nourl: defaultSourceConfig(),
    });
    let error: unknown;
    try {
      resolveSourceUrls({ name: 'mainnet' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SourceNotDeclaredError);
    expect(error).toMatchObject({ code: 'SOURCE_NOT_DECLARED', source: 'mainnet', retryable: false });
    expect((error as Error).message).toBe(
      'source mainnet: this process has no URL for it: set sources.mainnet.rpcUrl in the config it loads or ' +
        'BLOCKX_SOURCE_MAINNET_RPC_URL in its environment (declared here: other)',
    );
  });
});

describe('sharedBlockFetcher', () => {
  it('gives every task of one source one client, brought to the limits of the task that came last', () => {
    declareProcessSources({ shared_a: { ...defaultSourceConfig(), rpcUrl: KEYED } });
    const first: TaskSource = { name: 'shared_a', ...LIMITS };
    const a = sharedBlockFetcher(first);
    expect(a.client.settings).toMatchObject({ urls: [KEYED], requestsPerSecond: 10, requestBurst: 1 });
    const b = sharedBlockFetcher({ ...first, requestsPerSecond: 3, requestBurst: 2 });
    expect(b).toBe(a);
    expect(a.client.settings).toMatchObject({ requestsPerSecond: 3, requestBurst: 2 });
    // A task of an older CLI carries no requestBurst: the field table's default.
    expect(sharedBlockFetcher(first)).toBe(a);
    expect(a.client.settings.requestBurst).toBe(defaultSourceConfig().requestBurst);
  });

  it('another source, or the same name with other URLs, has a client of its own', () => {
    declareProcessSources({
      shared_b: { ...defaultSourceConfig(), rpcUrl: 'http://127.0.0.1:1/' },
      shared_c: { ...defaultSourceConfig(), rpcUrl: 'http://127.0.0.1:1/' },
    });
    const b = sharedBlockFetcher({ name: 'shared_b', ...LIMITS });
    expect(sharedBlockFetcher({ name: 'shared_c', ...LIMITS })).not.toBe(b);
    expect(sharedBlockFetcher({ name: 'shared_b', ...LIMITS, urls: ['http://127.0.0.1:2/'] })).not.toBe(b);
  });
});

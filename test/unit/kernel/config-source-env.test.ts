// Source URLs from the environment (docs/ingest.md § Where the URL lives): BLOCKX_SOURCE_<NAME>_RPC_URL and
// _FALLBACK_URL override `sources.<name>` or declare it, so a Worker can hold a provider's key outside
// the config file; a bad value is an issue naming the variable, never quoting the value.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';
import { ConfigError } from '../../../src/kernel/errors.js';

const FILE = `version: 1
deployments:
  block:
    kind: block
sources:
  mainnet:
    rpcUrl: http://127.0.0.1:8545
    requestsPerSecond: 7
`;

const resolve = (env: NodeJS.ProcessEnv) =>
  resolveConfig(parseConfigText(FILE, '/cfg/blockx.config.yaml'), { env });

describe('sources from the environment', () => {
  it('overrides the file’s URL and keeps the entry’s other fields', () => {
    const { sources } = resolve({ BLOCKX_SOURCE_MAINNET_RPC_URL: 'https://u:KEY123@node.example/rpc' });
    expect(sources['mainnet']).toMatchObject({
      rpcUrl: 'https://u:KEY123@node.example/rpc',
      requestsPerSecond: 7,
    });
  });

  it('declares a source the file does not name, with the field table’s defaults', () => {
    const { sources } = resolve({
      BLOCKX_SOURCE_ARCHIVE_NODE_RPC_URL: 'https://node.example/v2/abcdef0123456789abcd',
      BLOCKX_SOURCE_ARCHIVE_NODE_FALLBACK_URL: 'http://10.1.2.3:8545',
    });
    expect(sources['archive_node']).toMatchObject({
      rpcUrl: 'https://node.example/v2/abcdef0123456789abcd',
      fallbackUrl: 'http://10.1.2.3:8545',
      finality: 64,
      requestsPerSecond: 0,
      requestBurst: 1,
    });
    expect(sources['mainnet']?.rpcUrl).toBe('http://127.0.0.1:8545');
  });

  it('takes the WebSocket URL of ingest --follow from BLOCKX_SOURCE_<NAME>_WS_URL, ws:// or wss:// only', () => {
    const { sources } = resolve({ BLOCKX_SOURCE_MAINNET_WS_URL: 'wss://node.example/ws/KEY123' });
    expect(sources['mainnet']).toMatchObject({
      rpcUrl: 'http://127.0.0.1:8545',
      wsUrl: 'wss://node.example/ws/KEY123',
    });
    let error: unknown;
    try {
      resolve({ BLOCKX_SOURCE_MAINNET_WS_URL: 'https://SECRETKEY@node.example' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toContain('expected a ws:// or wss:// URL');
    expect(String((error as Error).message)).not.toContain('SECRETKEY');
  });

  it('ignores empty values and variables of another shape', () => {
    const { sources } = resolve({
      BLOCKX_SOURCE_MAINNET_RPC_URL: '',
      BLOCKX_SOURCE_RPC_URL: 'http://x',
      BLOCKX_SOURCE_mainnet_RPC_URL: 'http://y',
    });
    expect(Object.keys(sources)).toEqual(['mainnet']);
    expect(sources['mainnet']?.rpcUrl).toBe('http://127.0.0.1:8545');
  });

  it('a value that is not an http(s) URL is an issue naming the variable, without its value', () => {
    let error: unknown;
    try {
      resolve({ BLOCKX_SOURCE_MAINNET_RPC_URL: 'ftp://SECRETKEY@host' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues).toEqual([
      expect.objectContaining({
        source: 'env',
        variable: 'BLOCKX_SOURCE_MAINNET_RPC_URL',
        path: 'sources.mainnet.rpcUrl',
      }),
    ]);
    expect((error as Error).message).not.toContain('SECRETKEY');
  });
});

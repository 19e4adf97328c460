import { describe, expect, it } from 'vitest';
import { ChainRpcError, ChainRpcErrorCode } from '../../../../src/services/chain-rpc/errors.js';
import { maskRpcUrl } from '../../../../src/services/chain-rpc/url-mask.js';

describe('ChainRpcErrorCode', () => {
  it('each key equals its code', () => {
    for (const [key, code] of Object.entries(ChainRpcErrorCode)) expect(code).toBe(key);
  });

  it('the message names the source, the URL and the method, and the fields carry them', () => {
    const err = new ChainRpcError(ChainRpcErrorCode.TIMEOUT, 'no answer within 10 ms', {
      source: 'mainnet',
      url: 'https://host/v2/***',
      method: 'eth_getBlockByNumber',
      attempts: 3,
      retryable: true,
    });
    expect(err.message).toBe(
      'source mainnet (https://host/v2/***) eth_getBlockByNumber: no answer within 10 ms after 3 attempts',
    );
    expect(err).toMatchObject({
      code: 'TIMEOUT',
      source: 'mainnet',
      method: 'eth_getBlockByNumber',
      retryable: true,
    });
  });
});

describe('maskRpcUrl', () => {
  it.each([
    ['http://127.0.0.1:8545', 'http://127.0.0.1:8545/'],
    ['https://user:pw@host/rpc', 'https://user:***@host/rpc'],
    ['https://host/v3/9aa3d95b3bc440fa88ea12eaa4456161', 'https://host/v3/***'],
    ['https://host/rpc?apikey=s3cret&chain=1', 'https://host/rpc?apikey=***&chain=***'],
    ['https://host/some-long-path-name', 'https://host/some-long-path-name'],
    ['not a url', '(an unparseable URL)'],
  ])('%s → %s', (url, masked) => {
    expect(maskRpcUrl(url)).toBe(masked);
  });
});

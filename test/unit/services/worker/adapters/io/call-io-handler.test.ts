// The executor call path: `ctx.io` requests of a running function, answered through the task's scope
// with JSON-serialisable values (null for missing rows), and whole-result scans capped for the socket.
import { describe, expect, it } from 'vitest';
import type { CallIoRequest } from '../../../../../../src/services/call-host/adapters/executor-call-io.js';
import { MAX_CALL_SCAN_ROWS } from '../../../../../../src/services/worker/adapters/io/index.js';
import { harness, rejection } from './fixture.js';

const KEY_A = { chain_id: 1, number: 10, hash: '0xa' };
const BLOCK_A = { chain_id: 1, number: 10, hash: '0xa', timestamp: 1 };

describe('callIoHandler', () => {
  const cases: { name: string; request: CallIoRequest; expected: unknown }[] = [
    {
      name: 'get → the row',
      request: { kind: 'io', op: 'get', table: 'blocks', key: KEY_A },
      expected: { ...KEY_A, tx_count: 0 },
    },
    {
      name: 'get of a missing row → null',
      request: { kind: 'io', op: 'get', table: 'blocks', key: { ...KEY_A, hash: '0xnone' } },
      expected: null,
    },
    {
      name: 'get with a bare key of a single-column primary key',
      request: { kind: 'io', op: 'get', table: 'balances', key: 'alice' },
      expected: { address: 'alice', amount: '5' },
    },
    {
      name: 'getMany → rows in key order, null for misses',
      request: { kind: 'io', op: 'getMany', table: 'balances', keys: ['nobody', { address: 'alice' }] },
      expected: [null, { address: 'alice', amount: '5' }],
    },
    {
      name: "scan with the call's block object → that block's rows (hash and chain)",
      request: { kind: 'io', op: 'scan', table: 'transactions', options: { block: BLOCK_A } },
      expected: [
        { chain_id: 1, block_number: 10, block_hash: '0xa', idx: 0, value: 'v0' },
        { chain_id: 1, block_number: 10, block_hash: '0xa', idx: 1, value: 'v1' },
      ],
    },
    {
      name: 'scan with a limit',
      request: { kind: 'io', op: 'scan', table: 'blocks', options: { block: 10, limit: 1 } },
      expected: [{ chain_id: 1, number: 10, hash: '0xa', tx_count: 0 }],
    },
    {
      name: 'scan with limit 0 → no rows',
      request: { kind: 'io', op: 'scan', table: 'blocks', options: { limit: 0 } },
      expected: [],
    },
  ];
  it.each(cases)('$name', async ({ request, expected }) => {
    const { factory } = harness();
    await factory.open('t1');
    const value = await factory.callIoHandler('t1', request);
    expect(value).toEqual(expected);
    expect(JSON.parse(JSON.stringify(value))).toEqual(value);
  });

  it('reads through the calls retry scope', async () => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    const { StorageError } = await import('../../../../../../src/services/storage/errors.js');
    backend.failNext('get', new StorageError('OVERLOADED', 'busy'));
    await factory.callIoHandler('t1', { kind: 'io', op: 'get', table: 'blocks', key: KEY_A });
    expect(scope.stats().retries).toEqual({ builder: 0, calls: 1, result: 0 });
  });

  it('an unknown or closed task → IO_SCOPE_CLOSED, not retryable', async () => {
    const { factory } = harness();
    const request: CallIoRequest = { kind: 'io', op: 'get', table: 'blocks', key: KEY_A };
    expect(await rejection(factory.callIoHandler('nope', request))).toMatchObject({
      code: 'IO_SCOPE_CLOSED',
      retryable: false,
    });
    const scope = await factory.open('t1');
    await scope.close();
    expect(await rejection(factory.callIoHandler('t1', request))).toMatchObject({ code: 'IO_SCOPE_CLOSED' });
  });

  const errorCases: { name: string; request: CallIoRequest; code: string; message: RegExp }[] = [
    {
      name: 'an unknown scan option',
      request: { kind: 'io', op: 'scan', table: 'blocks', options: { blok: 10 } },
      code: 'UNKNOWN_OPTION',
      message: /"blok"/,
    },
    {
      name: 'getMany keys that are not an array',
      request: { kind: 'io', op: 'getMany', table: 'blocks', keys: 'x' as unknown as unknown[] },
      code: 'BAD_REQUEST',
      message: /array/,
    },
    {
      name: 'an unknown table',
      request: { kind: 'io', op: 'get', table: 'nope', key: { id: 1 } },
      code: 'UNKNOWN_TABLE',
      message: /nope/,
    },
    {
      name: 'an unknown op',
      request: { kind: 'io', op: 'put', table: 'blocks' } as unknown as CallIoRequest,
      code: 'BAD_REQUEST',
      message: /put/,
    },
    {
      name: 'a limit above the cap',
      request: { kind: 'io', op: 'scan', table: 'heights', options: { limit: MAX_CALL_SCAN_ROWS + 1 } },
      code: 'SCAN_TOO_LARGE',
      message: /pass a limit of at most 10000/,
    },
  ];
  it.each(errorCases)('$name → $code, not retryable', async ({ request, code, message }) => {
    const { factory, backend } = harness();
    await factory.open('t1');
    const err = await rejection(factory.callIoHandler('t1', request));
    expect(err).toMatchObject({ code, retryable: false });
    expect(String(err.message)).toMatch(message);
    expect(backend.calls.scan).toBe(0);
  });

  describe(`the ${MAX_CALL_SCAN_ROWS}-row cap`, () => {
    const many = Array.from({ length: MAX_CALL_SCAN_ROWS + 1 }, (_, i) => ({ number: i + 1, note: 'n' }));

    it('a scan without a limit returning more rows is refused, telling the author what to do', async () => {
      const { factory, backend } = harness({ batchSize: 1000 });
      backend.seed('heights', many);
      await factory.open('t1');
      const err = await rejection(
        factory.callIoHandler('t1', { kind: 'io', op: 'scan', table: 'heights', options: {} }),
      );
      expect(err).toMatchObject({ code: 'SCAN_TOO_LARGE', retryable: false });
      expect(String(err.message)).toMatch(/more than 10000 rows.*pass a limit.*builder/);
    });

    it('exactly the cap, or a limit up to it, is served whole', async () => {
      const { factory, backend } = harness({ batchSize: 1000 });
      backend.seed('heights', many.slice(0, MAX_CALL_SCAN_ROWS));
      await factory.open('t1');
      const all = await factory.callIoHandler('t1', {
        kind: 'io',
        op: 'scan',
        table: 'heights',
        options: {},
      });
      expect(all).toHaveLength(MAX_CALL_SCAN_ROWS);
      backend.seed('heights', many);
      const limited = await factory.callIoHandler('t1', {
        kind: 'io',
        op: 'scan',
        table: 'heights',
        options: { limit: MAX_CALL_SCAN_ROWS },
      });
      expect(limited).toHaveLength(MAX_CALL_SCAN_ROWS);
    });
  });
});

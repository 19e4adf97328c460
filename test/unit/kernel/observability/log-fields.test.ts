// What a log line may carry (docs/security.md § Logs): secrets masked by name and inside URLs, ids and
// other strings cut, shapes bounded, errors kept readable. Through `logFields` directly and through a real
// pino logger from `createLogger`, whose every line's fields, bindings and message go through it.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BlockxConfig } from '../../../../src/kernel/config-types.js';
import { MAX_ID_BYTES } from '../../../../src/kernel/input-bounds.js';
import {
  MAX_LOG_ARRAY_ITEMS,
  MAX_LOG_DEPTH,
  MAX_LOG_OBJECT_KEYS,
  MAX_LOG_STRING_BYTES,
  logFields,
  logString,
} from '../../../../src/kernel/observability/log-fields.js';
import { boundedPino, createLogger } from '../../../../src/kernel/observability/logger.js';

function capture() {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') raw.push(line);
      done();
    },
  });
  return { raw, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>), stream };
}

const config: Pick<BlockxConfig, 'observability'> = {
  observability: {
    prometheus: { listenAddr: '', path: '/metrics' },
    dashboard: {
      listenAddr: '',
      intervalMs: 1000,
      maxEventClients: 16,
      maxEventClientsPerClient: 4,
      maxConnectionsPerAddress: 16,
      allowedHosts: [],
    },
    logLevel: 'debug',
  },
};
const MiB = 1024 * 1024;

describe('logFields', () => {
  it.each([
    ['a URL password', { url: 'postgres://app:hunter2@db:5432/x' }, { url: 'postgres://app:***@db:5432/x' }],
    [
      'a URL in a message',
      { error: 'cannot open mysql://u:pw@h/db' },
      { error: 'cannot open mysql://u:***@h/db' },
    ],
    [
      'a secret query parameter',
      { url: 'pg://h/db?sslmode=require&password=pw' },
      { url: 'pg://h/db?sslmode=require&password=***' },
    ],
    ['a field named password', { password: 'pw', user: 'app' }, { password: '***', user: 'app' }],
    [
      'nested secret names',
      { storage: { apiKey: 'k', token: 12, plain: 1 } },
      { storage: { apiKey: '***', token: '***', plain: 1 } },
    ],
    [
      'credential headers',
      { headers: { authorization: 'Bearer x', cookie: 'c=1', accept: '*/*' } },
      { headers: { authorization: '***', cookie: '***', accept: '*/*' } },
    ],
    [
      'secrets inside arrays',
      { list: [{ secret: 's' }, 'a://u:p@h'] },
      { list: [{ secret: '***' }, 'a://u:***@h'] },
    ],
    ['empty secrets stay visible as empty', { password: '' }, { password: '' }],
    ['scalars untouched', { n: 1, b: true, z: null }, { n: 1, b: true, z: null }],
  ])('masks %s', (_name, input, expected) => {
    expect(logFields(input)).toEqual(expected);
  });

  it('cuts a 1 MiB id to MAX_ID_BYTES and any other string to MAX_LOG_STRING_BYTES, with a marker', () => {
    const huge = 'x'.repeat(MiB);
    const out = logFields({ task_id: huge, slotId: huge, taskIds: [huge], reason: huge });
    expect(out['task_id']).toBe('x'.repeat(MAX_ID_BYTES) + '…');
    expect(out['slotId']).toBe('x'.repeat(MAX_ID_BYTES) + '…');
    expect(out['taskIds']).toEqual(['x'.repeat(MAX_ID_BYTES) + '…']);
    expect(out['reason']).toBe('x'.repeat(MAX_LOG_STRING_BYTES) + '…');
    // Ids that fit are logged whole, and "valid"/"paid" are not ids.
    expect(logFields({ task_id: 't-1', valid: 'y'.repeat(300) })).toEqual({
      task_id: 't-1',
      valid: 'y'.repeat(300),
    });
  });

  it('masks a URL password before it cuts, so a cut never reveals a prefix of it', () => {
    const long = `postgres://app:${'p'.repeat(2 * MAX_LOG_STRING_BYTES)}@db/x`;
    expect(logString(long)).toBe('postgres://app:***@db/x');
  });

  it('bounds shapes: depth, array length, key count, cycles, buffers', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    const many = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`k${i}`, i]));
    const out = logFields({
      deep,
      list: Array.from({ length: 1_000 }, (_, i) => i),
      many,
      cyclic,
      buf: Buffer.alloc(MiB),
    });
    expect(JSON.stringify(out)).toContain('[object]');
    let walked = out['deep'] as Record<string, unknown> | string;
    let depth = 1;
    while (typeof walked === 'object') {
      walked = walked['d'] as Record<string, unknown> | string;
      depth++;
    }
    expect(depth).toBe(MAX_LOG_DEPTH);
    expect(out['list']).toHaveLength(MAX_LOG_ARRAY_ITEMS + 1);
    expect((out['list'] as unknown[]).at(-1)).toBe(`… ${1_000 - MAX_LOG_ARRAY_ITEMS} more`);
    expect(Object.keys(out['many'] as object)).toHaveLength(MAX_LOG_OBJECT_KEYS + 1);
    expect((out['many'] as Record<string, unknown>)['…']).toBe('50 more keys');
    expect(out['cyclic']).toEqual({ a: 1, self: '[circular]' });
    expect(out['buf']).toBe(`[${MiB} bytes]`);
  });

  it('never throws, and never mutates its input', () => {
    const trap = {
      get boom(): never {
        throw new Error('getter failed');
      },
    };
    expect(logFields(trap)).toEqual({ log_fields_error: 'getter failed' });
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.anything()), (obj) => {
        const before = JSON.stringify(obj);
        const out = logFields(obj);
        expect(JSON.stringify(obj)).toBe(before);
        expect(() => JSON.stringify(out)).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });
});

describe('createLogger bounds and masks every line', () => {
  it('fields, bindings and the message', () => {
    const { lines, raw, stream } = capture();
    const logger = createLogger(
      config,
      { service: 'worker', storage: 'postgres://app:hunter2@db/x' },
      { destination: stream },
    );
    const huge = 'y'.repeat(MiB);
    logger.warn({ task_id: huge, password: 'hunter2', url: 'redis://:hunter2@h:6379' }, `refused ${huge}`);
    logger.child({ token: 'hunter2' }).info('child line postgres://a:hunter2@h/db');
    expect(raw.join('\n')).not.toContain('hunter2');
    const [first, second] = lines();
    expect(first).toMatchObject({
      service: 'worker',
      storage: 'postgres://app:***@db/x',
      task_id: 'y'.repeat(MAX_ID_BYTES) + '…',
      password: '***',
      url: 'redis://:***@h:6379',
    });
    expect((first?.['msg'] as string).length).toBeLessThanOrEqual(MAX_LOG_STRING_BYTES + 1);
    expect(second).toMatchObject({ token: '***', msg: 'child line postgres://a:***@h/db' });
    expect(raw.every((l) => l.length < 16 * 1024)).toBe(true);
  });

  it('errors keep their type, message, code and stack, masked and bounded', () => {
    const { lines, raw, stream } = capture();
    const logger = createLogger(config, { service: 'worker' }, { destination: stream });
    const err = Object.assign(new TypeError('connect postgres://u:hunter2@h/db failed'), { code: 'ECONN' });
    logger.error({ err }, 'storage down');
    logger.error(new Error(`lost ${'z'.repeat(MiB)}`));
    logger.error({ err: new Error('pw=1 a://u:hunter2@h') });
    expect(raw.join('\n')).not.toContain('hunter2');
    const [a, b, c] = lines();
    expect(a?.['err']).toMatchObject({
      type: 'TypeError',
      message: 'connect postgres://u:***@h/db failed',
      code: 'ECONN',
    });
    expect((a?.['err'] as { stack: string }).stack).toContain('TypeError: connect postgres://u:***@h/db');
    expect(a?.['msg']).toBe('storage down');
    expect((b?.['msg'] as string).length).toBeLessThanOrEqual(MAX_LOG_STRING_BYTES + 1);
    expect((b?.['err'] as { message: string }).message.length).toBeLessThanOrEqual(MAX_LOG_STRING_BYTES + 1);
    expect(c?.['msg']).toBe('pw=1 a://u:***@h');
  });

  it('boundedPino does the same for a logger made from pino options (the worker command, blockx up)', () => {
    const { lines, stream } = capture();
    const logger = boundedPino({ base: { app: 'x' } }, stream);
    logger.info({ task_id: 'i'.repeat(1_000), secret: 's' }, 'line %s', 'postgres://a:b@c/d');
    logger.child({ service: 'storage' }).child({ apiKey: 'k' }).warn({ url: 'a://u:p@h' }, 'grandchild');
    expect(lines()).toMatchObject([
      { app: 'x', task_id: 'i'.repeat(MAX_ID_BYTES) + '…', secret: '***', msg: 'line postgres://a:***@c/d' },
      { app: 'x', service: 'storage', apiKey: '***', url: 'a://u:***@h', msg: 'grandchild' },
    ]);
  });
});

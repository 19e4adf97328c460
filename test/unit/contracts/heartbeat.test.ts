import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeWorkerHeartbeat,
  MAX_HEARTBEAT_SLOTS,
  parseWorkerHeartbeat,
  parseWorkerRegistration,
} from '../../../src/contracts/heartbeat.js';
import type { WorkerHeartbeat } from '../../../src/contracts/heartbeat.js';

const GOOD: WorkerHeartbeat = {
  workerAddr: '10.0.0.7:9090',
  taskSlots: 16,
  reservedSlots: 2,
  runningTasks: 3,
  cpuPercent: 0.42,
  memoryPercent: 0.5,
  memoryAvailableBytes: 8_000_000_000,
  memoryTotalBytes: 16_000_000_000,
  processRssBytes: 123_456_789,
  errorRate: 0,
  lastHeartbeatMs: 1_785_000_000_000,
};
const json = (over: Record<string, unknown>) => JSON.stringify({ ...GOOD, ...over });
const without = (field: string) => {
  const o: Record<string, unknown> = { ...GOOD };
  delete o[field];
  return JSON.stringify(o);
};

describe('parseWorkerHeartbeat', () => {
  it('accepts a valid value from text or bytes, ignoring unknown fields', () => {
    expect(parseWorkerHeartbeat(JSON.stringify(GOOD))).toEqual({ ok: true, value: GOOD });
    expect(parseWorkerHeartbeat(new TextEncoder().encode(JSON.stringify(GOOD)))).toEqual({
      ok: true,
      value: GOOD,
    });
    const r = parseWorkerHeartbeat(json({ futureField: 'x' }));
    expect(r.ok && Object.keys(r.value)).not.toContain('futureField');
  });

  it.each([
    { name: 'fractions at their bounds', over: { cpuPercent: 0, memoryPercent: 1, errorRate: 1 } },
    { name: 'taskSlots at the bound', over: { taskSlots: 100_000 } },
    // Plausibility of the timestamp needs a clock: the core's freshness rule decides (freshness.ts).
    { name: 'a far-future timestamp', over: { lastHeartbeatMs: Number.MAX_SAFE_INTEGER } },
    {
      name: 'an over-committed pool (the core filters it, the parser does not)',
      over: { reservedSlots: 20 },
    },
    { name: 'zero slots', over: { taskSlots: 0 } },
  ])('accepts $name', ({ over }) => {
    expect(parseWorkerHeartbeat(json(over)).ok).toBe(true);
  });

  it.each([
    { name: 'not JSON', value: '{workerAddr:', field: undefined },
    { name: 'empty', value: '', field: undefined },
    { name: 'null', value: 'null', field: undefined },
    { name: 'an array', value: '[1,2]', field: undefined },
    { name: 'a string', value: '"hi"', field: undefined },
    { name: 'a number', value: '42', field: undefined },
    { name: 'missing workerAddr', value: without('workerAddr'), field: 'workerAddr' },
    { name: 'empty workerAddr', value: json({ workerAddr: '' }), field: 'workerAddr' },
    { name: 'numeric workerAddr', value: json({ workerAddr: 9090 }), field: 'workerAddr' },
    { name: 'workerAddr with a space', value: json({ workerAddr: 'a b:1' }), field: 'workerAddr' },
    { name: 'workerAddr with a newline', value: json({ workerAddr: 'a\n:1' }), field: 'workerAddr' },
    { name: 'missing lastHeartbeatMs', value: without('lastHeartbeatMs'), field: 'lastHeartbeatMs' },
    { name: 'missing memoryTotalBytes', value: without('memoryTotalBytes'), field: 'memoryTotalBytes' },
    { name: 'string taskSlots', value: json({ taskSlots: '16' }), field: 'taskSlots' },
    { name: 'null reservedSlots', value: json({ reservedSlots: null }), field: 'reservedSlots' },
    { name: 'negative runningTasks', value: json({ runningTasks: -1 }), field: 'runningTasks' },
    { name: 'fractional taskSlots', value: json({ taskSlots: 1.5 }), field: 'taskSlots' },
    { name: 'taskSlots above the bound', value: json({ taskSlots: 100_001 }), field: 'taskSlots' },
    { name: 'reservedSlots above the bound', value: json({ reservedSlots: 1e6 }), field: 'reservedSlots' },
    { name: 'runningTasks above the bound', value: json({ runningTasks: 2 ** 40 }), field: 'runningTasks' },
    { name: 'errorRate above 1', value: json({ errorRate: 1.01 }), field: 'errorRate' },
    { name: 'cpu as a percentage', value: json({ cpuPercent: 42 }), field: 'cpuPercent' },
    { name: 'negative memory fraction', value: json({ memoryPercent: -0.1 }), field: 'memoryPercent' },
    { name: 'error rate above 1', value: json({ errorRate: 1.0001 }), field: 'errorRate' },
    { name: 'boolean error rate', value: json({ errorRate: false }), field: 'errorRate' },
    { name: 'negative bytes', value: json({ processRssBytes: -5 }), field: 'processRssBytes' },
    { name: 'unsafe integer bytes', value: json({ memoryTotalBytes: 2 ** 60 }), field: 'memoryTotalBytes' },
    {
      name: 'overflowing number',
      value: json({}).replace('"taskSlots":16', '"taskSlots":1e400'),
      field: 'taskSlots',
    },
    { name: 'fractional timestamp', value: json({ lastHeartbeatMs: 1.5 }), field: 'lastHeartbeatMs' },
    { name: 'negative timestamp', value: json({ lastHeartbeatMs: -1 }), field: 'lastHeartbeatMs' },
  ])('rejects $name', ({ value, field }) => {
    const r = parseWorkerHeartbeat(value);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('HEARTBEAT_INVALID');
    expect(r.error.field).toBe(field);
  });

  it('rejects invalid UTF-8 bytes', () => {
    const r = parseWorkerHeartbeat(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    expect(r.ok ? '' : r.error.message).toMatch(/UTF-8/);
  });

  it('(property) never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.uint8Array()), (v) => {
        const r = parseWorkerHeartbeat(v);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('(property) any valid heartbeat survives encode → parse unchanged', () => {
    const nat = fc.nat({ max: 2 ** 40 });
    const slots = fc.nat({ max: MAX_HEARTBEAT_SLOTS });
    const frac = fc.double({ min: 0, max: 1, noNaN: true });
    const hbArb = fc.record({
      workerAddr: fc.stringMatching(/^[a-z0-9.:-]{1,30}$/),
      taskSlots: slots,
      reservedSlots: slots,
      runningTasks: slots,
      cpuPercent: frac,
      memoryPercent: frac,
      memoryAvailableBytes: nat,
      memoryTotalBytes: nat,
      processRssBytes: nat,
      errorRate: frac,
      lastHeartbeatMs: nat,
    });
    fc.assert(
      fc.property(hbArb, (hb) => {
        const r = parseWorkerHeartbeat(encodeWorkerHeartbeat(hb));
        // -0 becomes 0 through JSON; compare by value.
        expect(r.ok && JSON.stringify(r.value)).toBe(JSON.stringify(hb));
      }),
    );
  });
});

describe('encodeWorkerHeartbeat', () => {
  it('writes exactly the documented fields in canonical order, dropping extras', () => {
    const withExtra = { ...GOOD, penalty: 3 } as WorkerHeartbeat;
    expect(Object.keys(JSON.parse(encodeWorkerHeartbeat(withExtra)))).toEqual([
      'workerAddr',
      'taskSlots',
      'reservedSlots',
      'runningTasks',
      'cpuPercent',
      'memoryPercent',
      'memoryAvailableBytes',
      'memoryTotalBytes',
      'processRssBytes',
      'errorRate',
      'lastHeartbeatMs',
    ]);
  });
});

describe('reclaimableSlots (optional, docs/security.md § Reservations per client)', () => {
  it('is absent from an encoding when 0 and round-trips when set', () => {
    expect(Object.keys(JSON.parse(encodeWorkerHeartbeat({ ...GOOD, reclaimableSlots: 0 })))).not.toContain(
      'reclaimableSlots',
    );
    const hb = { ...GOOD, reservedSlots: 6, reclaimableSlots: 3 };
    expect(parseWorkerHeartbeat(encodeWorkerHeartbeat(hb))).toEqual({ ok: true, value: hb });
  });
  it.each([
    ['negative', -1],
    ['fractional', 1.5],
    ['above reservedSlots', 1_000],
    ['a string', '2'],
  ])('rejects %s', (_name, value) => {
    const r = parseWorkerHeartbeat(JSON.stringify({ ...GOOD, reclaimableSlots: value }));
    expect(r.ok ? 'ok' : r.error.field).toBe('reclaimableSlots');
  });
});

describe('parseWorkerRegistration', () => {
  const prefix = '/blockx/workers/';
  it('accepts a value whose workerAddr matches the key', () => {
    expect(parseWorkerRegistration(prefix, prefix + GOOD.workerAddr, JSON.stringify(GOOD))).toEqual({
      ok: true,
      value: GOOD,
    });
  });
  it.each([
    { name: 'a key under another prefix', key: '/blockx/bundle-workers/10.0.0.7:9090', field: undefined },
    { name: 'the bare prefix', key: prefix, field: undefined },
    { name: 'a key naming another Worker', key: `${prefix}10.0.0.8:9090`, field: 'workerAddr' },
  ])('rejects $name', ({ key, field }) => {
    const r = parseWorkerRegistration(prefix, key, JSON.stringify(GOOD));
    expect(r.ok ? 'ok' : r.error.field).toBe(field);
  });
  it('passes a parse failure through', () => {
    const r = parseWorkerRegistration(prefix, prefix + 'x', 'garbage');
    expect(r.ok ? '' : r.error.message).toMatch(/JSON/);
  });
});

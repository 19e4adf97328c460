// The heartbeat's code-version fields (src/contracts/heartbeat.ts; docs/functions-deploy.md § Where the
// version shows): optional both ways, validated when present, encoded only when set.
import { describe, expect, it } from 'vitest';
import {
  MAX_CODE_VERSION_CHARS,
  MAX_CODE_VERSION_ERROR_CHARS,
  encodeWorkerHeartbeat,
  parseWorkerHeartbeat,
  type WorkerHeartbeat,
} from '../../../src/contracts/heartbeat.js';

const base: WorkerHeartbeat = {
  workerAddr: '10.0.0.7:9090',
  taskSlots: 8,
  reservedSlots: 1,
  runningTasks: 2,
  cpuPercent: 0.5,
  memoryPercent: 0.5,
  memoryAvailableBytes: 1,
  memoryTotalBytes: 2,
  processRssBytes: 1,
  errorRate: 0,
  lastHeartbeatMs: 1,
};
const withFields = (extra: Record<string, unknown>): string => JSON.stringify({ ...base, ...extra });

describe('heartbeat codeVersion / codeVersionError', () => {
  it('an old heartbeat without them parses unchanged; encoding omits them when unset or empty', () => {
    const r = parseWorkerHeartbeat(JSON.stringify(base));
    expect(r.ok && r.value).toEqual(base);
    expect(JSON.parse(encodeWorkerHeartbeat({ ...base, codeVersion: '', codeVersionError: '' }))).toEqual(
      base,
    );
  });

  it('round-trips both fields', () => {
    const hb = {
      ...base,
      codeVersion: '0123456789abcdef',
      codeVersionError: 'refused version x (still serving y): z',
    };
    const r = parseWorkerHeartbeat(encodeWorkerHeartbeat(hb));
    expect(r.ok && r.value).toEqual(hb);
  });

  it('encoding truncates an over-long error to the limit the parser accepts', () => {
    const hb = {
      ...base,
      codeVersion: 'local',
      codeVersionError: 'e'.repeat(MAX_CODE_VERSION_ERROR_CHARS + 50),
    };
    const r = parseWorkerHeartbeat(encodeWorkerHeartbeat(hb));
    expect(r.ok && r.value.codeVersionError?.length).toBe(MAX_CODE_VERSION_ERROR_CHARS);
  });

  it.each([
    ['codeVersion', ''],
    ['codeVersion', 7],
    ['codeVersion', 'has space'],
    ['codeVersion', 'a'.repeat(MAX_CODE_VERSION_CHARS + 1)],
    ['codeVersionError', 12],
    ['codeVersionError', 'line\nbreak'],
    ['codeVersionError', 'x'.repeat(MAX_CODE_VERSION_ERROR_CHARS + 1)],
  ])('refuses %s = %j, naming the field', (field, value) => {
    const r = parseWorkerHeartbeat(withFields({ [field]: value }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.field).toBe(field);
  });
});

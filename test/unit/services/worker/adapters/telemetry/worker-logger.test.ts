// withBoundedTaskIds: no log line carries an unbounded task id (docs/security.md § Input bounds).
import { describe, expect, it } from 'vitest';
import { MAX_ID_BYTES } from '../../../../../../src/kernel/input-bounds.js';
import { withBoundedTaskIds } from '../../../../../../src/services/worker/adapters/telemetry/worker-logger.js';
import type { ServiceLogger } from '../../../../../../src/kernel/observability/service-logger.js';

function recording(): { logger: ServiceLogger; lines: [string, Record<string, unknown>, string][] } {
  const lines: [string, Record<string, unknown>, string][] = [];
  const at =
    (level: string) =>
    (obj: Record<string, unknown>, msg: string): void => {
      lines.push([level, obj, msg]);
    };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

describe('withBoundedTaskIds', () => {
  it.each([
    ['an accepted id, whole', 'task-1', 'task-1'],
    ['exactly MAX_ID_BYTES, whole', 'x'.repeat(MAX_ID_BYTES), 'x'.repeat(MAX_ID_BYTES)],
    ['a 1 MiB id, cut', 'x'.repeat(1024 * 1024), `${'x'.repeat(MAX_ID_BYTES)}…`],
  ])('%s', (_name, taskId, logged) => {
    const { logger, lines } = recording();
    const bounded = withBoundedTaskIds(logger);
    for (const level of ['debug', 'info', 'warn', 'error'] as const) {
      bounded[level]({ task_id: taskId, rpc: 'RequestTaskSlot' }, 'm');
    }
    expect(lines.map(([level, obj]) => [level, obj['task_id'], obj['rpc']])).toEqual(
      ['debug', 'info', 'warn', 'error'].map((level) => [level, logged, 'RequestTaskSlot']),
    );
  });

  it('passes objects without a string task_id through unchanged', () => {
    const { logger, lines } = recording();
    const obj = { address: '127.0.0.1:1' };
    withBoundedTaskIds(logger).info(obj, 'started');
    expect(lines[0]![1]).toBe(obj);
  });
});

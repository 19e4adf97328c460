// createLogger: JSON lines with the service's identity, at the configured level, to the given stream.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { BlockxConfig, LogLevel } from '../../../../src/kernel/config-types.js';
import { createLogger } from '../../../../src/kernel/observability/logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

function config(logLevel: LogLevel): Pick<BlockxConfig, 'observability'> {
  return {
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
      logLevel,
    },
  };
}

describe('createLogger', () => {
  it('writes one JSON object per line with the bindings, the message and the fields', () => {
    const { lines, stream } = capture();
    const logger = createLogger(
      config('info'),
      { service: 'worker', deployment: 'block', worker: 0 },
      { destination: stream },
    );
    logger.info({ task_id: 't-1', slot_id: 's-1' }, 'task accepted');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      service: 'worker',
      deployment: 'block',
      worker: 0,
      task_id: 't-1',
      slot_id: 's-1',
      msg: 'task accepted',
    });
    expect(typeof lines[0]?.time).toBe('number');
  });

  it('drops lines below observability.logLevel; options.level overrides it', () => {
    const { lines, stream } = capture();
    const warnOnly = createLogger(config('warn'), { service: 'coordinator' }, { destination: stream });
    warnOnly.info({}, 'hidden');
    warnOnly.debug({}, 'hidden');
    warnOnly.warn({}, 'shown');
    const debug = createLogger(
      config('warn'),
      { service: 'coordinator' },
      { destination: stream, level: 'debug' },
    );
    debug.debug({ task_id: 't' }, 'reservation finished');
    expect(lines.map((l) => l.msg)).toEqual(['shown', 'reservation finished']);
  });

  it('silent logs nothing', () => {
    const { lines, stream } = capture();
    createLogger(config('silent'), { service: 'worker' }, { destination: stream }).error({}, 'x');
    expect(lines).toEqual([]);
  });
});

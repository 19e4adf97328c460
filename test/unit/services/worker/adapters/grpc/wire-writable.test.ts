// SubmitTask admission refuses a writer config naming a table tasks may not write (docs/storage.md,
// "Which tables tasks may write") when the validator carries the declared tables, as run-worker's does.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../../../src/kernel/config-types.js';
import { createPluginRegistry } from '../../../../../../src/kernel/plugin-registry.js';
import type { BuilderPlugin } from '../../../../../../src/kernel/plugin-types.js';
import { submitTaskFromWire } from '../../../../../../src/services/worker/adapters/grpc/wire.js';
import { WorkerAdmissionError } from '../../../../../../src/services/worker/core/index.js';
import { builderDef, callListBuilder, returnValueWriter, writerDef } from '../orchestration/harness.js';

const cols = { columns: { n: { type: 'integer', nullable: false } }, primaryKey: ['n'] } as const;
const TABLES: Record<string, TableConfig> = { events: { ...cols }, out: { ...cols, writable: true } };
const registry = createPluginRegistry({
  builders: [builderDef('CallListCallConfig', callListBuilder as BuilderPlugin)],
  writers: [writerDef('BlockWriteResultHandler', returnValueWriter)],
});
const withTables = { ...registry, tables: TABLES };

function submit(table: string, plugins: Parameters<typeof submitTaskFromWire>[1]) {
  return submitTaskFromWire(
    {
      slotId: '',
      task: {
        taskId: 't1',
        functionCallConfig: {
          type: 'CallListCallConfig',
          config: Buffer.from(JSON.stringify({ function: 'f', callList: [] })),
        },
        resultHandler: {
          type: 'BlockWriteResultHandler',
          config: Buffer.from(JSON.stringify({ table, chainId: 1, block: { number: 2 } })),
        },
        taskTimeoutMs: 0,
      },
    },
    plugins,
  );
}

describe('submitTaskFromWire: writer tables', () => {
  it.each(['events', 'undeclared'])('a writer of %s is InvalidArgument naming the rule', (table) => {
    let err: unknown;
    try {
      submit(table, withTables);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WorkerAdmissionError);
    expect((err as WorkerAdmissionError).code).toBe('InvalidArgument');
    expect((err as WorkerAdmissionError).detail).toMatchObject({ field: 'task.result_handler.config' });
    expect((err as Error).message).toContain(`(rule: tables.${table}.writable)`);
  });

  it('a writer of a writable table is admitted', () => {
    expect(submit('out', withTables).input.resultHandler?.config).toMatchObject({ table: 'out' });
  });

  it('without tables (no storage view) only the schema is checked', () => {
    expect(submit('events', registry).input.taskId).toBe('t1');
  });
});

// blockx validate --coordinator's view of a running cluster (src/cli/cluster-serving.ts): a Worker's
// DescribeServing answer as a registry and tables, and the merge of each Worker's problems with the
// local ones.
import { describe, expect, it } from 'vitest';
import { clusterIssues, servedView, type ServedView } from '../../../src/cli/cluster-serving.js';
import { servingToWire } from '../../../src/services/worker/adapters/grpc/admin-server.js';
import { createPluginRegistry } from '../../../src/kernel/plugin-registry.js';
import type { SchemaIssue } from '../../../src/kernel/errors.js';

const SCHEMA = {
  type: 'object',
  properties: { tables: { type: 'array', items: { type: 'string' } } },
  required: ['tables'],
  additionalProperties: false,
};
const TABLES = {
  notes: { columns: { id: { type: 'integer' } }, primaryKey: ['id'], writable: true },
} as never;

describe('servedView', () => {
  it('round-trips what a Worker serves: plugin types, kinds and schemas, and its tables', () => {
    const registry = createPluginRegistry({
      writers: [
        {
          type: 'TableUpsertsResultHandler',
          name: 'w',
          packagePath: '/p/w',
          schema: SCHEMA,
          impl: { execute: () => Promise.resolve({}) as never },
        },
      ],
      builders: [
        {
          type: 'CallListCallConfig',
          name: 'b',
          packagePath: '/p/b',
          schema: {},
          impl: { build: () => Promise.resolve([]) as never },
        },
      ],
    });
    const wire = servingToWire({
      deployment: 'block',
      plugins: registry,
      tables: TABLES,
      functions: ['greet', 'score'],
    });
    expect(wire.plugins.map((p) => `${p.kind}:${p.type}`)).toEqual([
      'builder:CallListCallConfig',
      'writer:TableUpsertsResultHandler',
    ]);
    const view = servedView('w1:1', wire);
    expect(view).toMatchObject({
      worker: 'w1:1',
      deployment: 'block',
      tables: TABLES,
      functions: ['greet', 'score'],
    });
    // A Worker that cannot list its functions says so; the local lookup then stands in.
    const silent = servingToWire({
      deployment: 'block',
      plugins: registry,
      tables: TABLES,
      functions: undefined,
    });
    expect(servedView('w1:1', silent).functions).toBeUndefined();
    expect(view.plugins.writers.types()).toEqual(['TableUpsertsResultHandler']);
    expect(view.plugins.validateTaskConfig('writer', 'TableUpsertsResultHandler', { tables: ['x'] })).toEqual(
      [],
    );
    expect(view.plugins.validateTaskConfig('writer', 'TableUpsertsResultHandler', {})).not.toEqual([]);
    expect(view.plugins.validateTaskConfig('writer', 'Nope', {})[0]?.message).toMatch(/unknown writer type/);
    const execute = view.plugins.writers.get('TableUpsertsResultHandler')!.impl.execute as () => unknown;
    expect(execute).toThrow(/only its config schema is known here/);
  });
});

describe('clusterIssues', () => {
  const issue = (path: string, message: string): SchemaIssue => ({ path, rule: 'r', message });
  const view = (worker: string) => ({ worker }) as ServedView;
  it.each([
    {
      name: 'a problem every Worker has, not local: one issue naming both Workers',
      local: [],
      byWorker: { a: [issue('/x', 'no table')], b: [issue('/x', 'no table')] },
      want: ['/x: no table (on the running cluster: workers a, b, which differs from this project'],
    },
    {
      name: 'a problem the local check has too is not repeated',
      local: [issue('/x', 'no table')],
      byWorker: { a: [issue('/x', 'no table')] },
      want: [],
    },
    {
      name: 'a path the local check found a problem at is not reported again, whatever the message',
      local: [issue('/x', 'no table "t" in this config')],
      byWorker: { a: [issue('/x', 'no table "t" on the worker')] },
      want: [],
    },
    {
      name: 'one Worker behind',
      local: [],
      byWorker: { a: [], b: [issue('/y', 'unknown writer')] },
      want: ['/y: unknown writer (on the running cluster: worker b, which differs from this project'],
    },
  ])('$name', ({ local, byWorker, want }) => {
    const views = Object.keys(byWorker).map(view);
    const got = clusterIssues(local, views, (v) => byWorker[v.worker as keyof typeof byWorker] ?? []);
    expect(got.map((i) => `${i.path}: ${i.message}`.slice(0, want[0]?.length ?? 0))).toEqual(want);
  });
});

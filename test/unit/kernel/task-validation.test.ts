import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { TaskConfigError } from '../../../src/kernel/errors.js';
import { createKernelHooks } from '../../../src/kernel/hooks.js';
import { loadPlugins } from '../../../src/kernel/plugin-loader.js';
import type { PluginRegistry } from '../../../src/kernel/plugin-registry.js';
import { normalizeTaskInput, validateTaskInput } from '../../../src/kernel/task-validation.js';

const repo = (p: string): string => fileURLToPath(new URL(`../../../${p}`, import.meta.url));
const example = JSON.parse(readFileSync(repo('examples/tasks/hello-world.json'), 'utf8')) as Record<
  string,
  unknown
>;

let registry: PluginRegistry;
beforeAll(async () => {
  registry = await loadPlugins({
    dirs: [repo('plugins/builders'), repo('plugins/writers')],
    packages: [],
    baseDir: repo(''),
    hooks: createKernelHooks(),
  });
});

/** The example task with some fields replaced (undefined removes a field). */
function task(overrides: Record<string, unknown>): Record<string, unknown> {
  const t: Record<string, unknown> = { ...structuredClone(example), ...overrides };
  for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete t[k];
  return t;
}

describe('validateTaskInput', () => {
  it("accepts the README's example task (hello_world over CallListCallConfig + ReturnValueResultHandler)", () => {
    expect(example).toMatchObject({
      task_id: '3f2b1c9e-8a4d-4c1e-9b0a-6f7e5d4c3b2a',
      functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world' } },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      taskTimeoutMs: 30000,
    });
    expect(validateTaskInput(example, registry)).toEqual([]);
  });

  it('accepts taskId as an alias, no resultHandler, no timeout, and an omitted writer config', () => {
    expect(validateTaskInput(task({ task_id: undefined, taskId: 't-1' }), registry)).toEqual([]);
    expect(validateTaskInput(task({ resultHandler: undefined, taskTimeoutMs: undefined }), registry)).toEqual(
      [],
    );
    expect(
      validateTaskInput(task({ resultHandler: { type: 'ReturnValueResultHandler' } }), registry),
    ).toEqual([]);
  });

  it('a builder config that violates the plugin schema fails naming the rule and the path', () => {
    const issues = validateTaskInput(
      task({ functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world' } } }),
      registry,
    );
    expect(issues).toEqual([
      {
        path: '/functionCallConfig/config',
        rule: 'required',
        message: "must have required property 'callList'",
      },
    ]);
  });

  it('reports every violation of the builder and the writer config at once', () => {
    const issues = validateTaskInput(
      task({
        functionCallConfig: { type: 'CallListCallConfig', config: { function: 'no/slashes', callList: [1] } },
        resultHandler: { type: 'ReturnValueResultHandler', config: { pretty: true } },
      }),
      registry,
    );
    expect(issues.map((i) => [i.path, i.rule])).toEqual([
      ['/functionCallConfig/config/function', 'pattern'],
      ['/functionCallConfig/config/callList/0', 'type'],
      ['/resultHandler/config', 'additionalProperties'],
    ]);
    expect(issues[2]?.message).toContain("'pretty'");
  });

  it('an unknown builder type lists the known builder types', () => {
    const issues = validateTaskInput(
      task({ functionCallConfig: { type: 'NoSuchCallConfig', config: {} } }),
      registry,
    );
    expect(issues).toEqual([
      {
        path: '/functionCallConfig/type',
        rule: 'knownType',
        message:
          'unknown builder type "NoSuchCallConfig"; known builder types: BlockBundleCallConfig, BlockTableCallConfig, CallListCallConfig, ChainIngestCallConfig',
      },
    ]);
  });

  it('an unknown writer type lists the known writer types', () => {
    const [issue] = validateTaskInput(
      task({ resultHandler: { type: 'CallListCallConfig', config: {} } }),
      registry,
    );
    expect(issue).toMatchObject({ path: '/resultHandler/type', rule: 'knownType' });
    expect(issue?.message).toContain(
      'known writer types: BlockBundleWriteResultHandler, BlockWriteResultHandler, ChainIngestResultHandler, ReturnValueResultHandler, TableUpsertsResultHandler',
    );
  });

  it.each([
    ['no task id', { task_id: undefined }, '', 'required', /'task_id' \(or its alias 'taskId'\)/],
    ['both task_id and taskId', { taskId: 'x' }, '/taskId', 'not', /not both/],
    ['an empty task id', { task_id: '' }, '/task_id', 'minLength', /fewer than 1/],
    // docs/security.md § Input bounds: the worker refuses ids over 256 bytes; validate says so first.
    ['a task id over 256', { task_id: 'x'.repeat(257) }, '/task_id', 'maxLength', /more than 256/],
    [
      'a taskId alias over 256',
      { task_id: undefined, taskId: 'x'.repeat(257) },
      '/taskId',
      'maxLength',
      /more than 256/,
    ],
    ['no functionCallConfig', { functionCallConfig: undefined }, '', 'required', /functionCallConfig/],
    ['a negative timeout', { taskTimeoutMs: -1 }, '/taskTimeoutMs', 'minimum', /must be >= 0/],
    ['a fractional timeout', { taskTimeoutMs: 1.5 }, '/taskTimeoutMs', 'type', /must be integer/],
    ['a snake_case timeout', { task_timeout_ms: 5 }, '', 'additionalProperties', /'task_timeout_ms'/],
    [
      'a type that is not a string',
      { functionCallConfig: { type: 3, config: {} } },
      '/functionCallConfig/type',
      'type',
      /string/,
    ],
    [
      'an unknown key in a plugin config',
      { resultHandler: { type: 'ReturnValueResultHandler', cfg: {} } },
      '/resultHandler',
      'additionalProperties',
      /'cfg'/,
    ],
  ])('rejects %s', (_name, overrides, path, rule, message) => {
    const issues = validateTaskInput(task(overrides), registry);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path, rule });
    expect(issues[0]?.message).toMatch(message);
  });

  it('rejects a task that is not an object', () => {
    expect(validateTaskInput([], registry)).toMatchObject([{ path: '', rule: 'type' }]);
    expect(validateTaskInput(null, registry)).toMatchObject([{ path: '', rule: 'type' }]);
  });
});

describe('normalizeTaskInput', () => {
  it('returns one spelling of every field', () => {
    expect(normalizeTaskInput(example)).toEqual({
      taskId: '3f2b1c9e-8a4d-4c1e-9b0a-6f7e5d4c3b2a',
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
      },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      taskTimeoutMs: 30000,
    });
  });

  it('applies defaults: taskId alias, timeout 0, config {}, no resultHandler', () => {
    const input = normalizeTaskInput({ taskId: 't', functionCallConfig: { type: 'XCallConfig' } });
    expect(input).toEqual({
      taskId: 't',
      functionCallConfig: { type: 'XCallConfig', config: {} },
      taskTimeoutMs: 0,
    });
    expect('resultHandler' in input).toBe(false);
  });

  it('throws a TaskConfigError listing every structural problem', () => {
    expect(() => normalizeTaskInput({ taskTimeoutMs: -5 })).toThrow(TaskConfigError);
    try {
      normalizeTaskInput({ taskTimeoutMs: -5 });
    } catch (err) {
      expect((err as TaskConfigError).issues.map((i) => i.rule).sort()).toEqual([
        'minimum',
        'required',
        'required',
      ]);
    }
  });
});

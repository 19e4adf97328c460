import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';
import { ConfigError, ConfigNotFoundError, type ConfigIssue } from '../../../src/kernel/errors.js';
import { ENV_BINDINGS } from '../../../src/kernel/config-env.js';

const REPO = path.resolve(import.meta.dirname, '../../..');

const MINIMAL = `version: 1
deployments:
  block:
    kind: block
  bundle:
    kind: bundle
`;

function issuesOf(
  text: string,
  env: NodeJS.ProcessEnv = {},
  file = '/cfg/blockx.config.yaml',
): ConfigIssue[] {
  try {
    resolveConfig(parseConfigText(text, file), { env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).issues];
  }
  throw new Error('expected the config to be rejected');
}

describe('loadConfig: the repository config', () => {
  it('loads blockx.config.yaml found from the repo root, with every default present', () => {
    const config = loadConfig({ cwd: REPO, env: {} });
    expect(config.configFile).toBe(path.join(REPO, 'blockx.config.yaml'));
    expect(Object.keys(config.deployments).sort()).toEqual(['block', 'bundle']);
    const block = config.deployments.block!;
    expect(block.coordinator).toMatchObject({
      listen: ':8080',
      registryPrefixes: ['/blockx/workers/'],
      workerRpcTimeoutMs: 3000,
      heartbeatTimeoutMs: 10000,
      watchGracePeriodMs: 10000,
      slotTtlMs: 5000,
      maxCandidates: 3,
      maxTimeoutRetries: 1,
      circuitBreakerThreshold: 3,
      circuitBreakerCooldownMs: 10000,
      cpuRedLine: 0.9,
      memoryRedLine: 0.9,
      errorRateRedLine: 0.5,
    });
    expect(block.worker.admission).toEqual({
      builderSlots: 16,
      executorTaskSlots: 32,
      pluginSlots: 16,
      scanSlots: 8,
    });
    expect(block.worker).toMatchObject({
      taskMaxInflightCalls: 1024,
      defaultTtlMs: 5000,
      maxSlotTtlMs: 60000,
      taskDeadlineMs: 300000,
      maxTaskTimeoutMs: 8 * 3600 * 1000,
      resultRetentionMs: 300000,
      heartbeatIntervalMs: 200,
      watchDisconnectGraceMs: 0,
      callDeadlineMs: 5000,
      timerScanMs: 500,
      keepaliveTimeMs: 30000,
      keepaliveTimeoutMs: 10000,
    });
    expect(config.deployments.bundle!.coordinator.registryPrefixes).toEqual([
      '/blockx/bundle-workers/',
      '/blockx/prod/lanes/default/bundle-workers/',
    ]);
    expect(config.functions.dir).toBe(path.join(REPO, 'functions'));
    expect(config.plugins.dirs).toEqual([]);
  });

  it('the repository file states exactly the defaults a minimal file gets', () => {
    const full = loadConfig({ cwd: REPO, env: {} });
    const minimal = resolveConfig(parseConfigText(MINIMAL, path.join(REPO, 'blockx.config.yaml')), {
      env: {},
    });
    for (const name of ['block', 'bundle']) {
      const { coordinator, executor } = full.deployments[name]!;
      const { listen, ...worker } = full.deployments[name]!.worker;
      const m = minimal.deployments[name]!;
      expect({ ...m.worker, listen }).toEqual({ ...worker, listen });
      expect(m.executor).toEqual(executor);
      expect({ ...m.coordinator, listen: coordinator.listen }).toEqual(coordinator);
    }
  });

  it('returns a deeply frozen object', () => {
    const config = resolveConfig(parseConfigText(MINIMAL, '/x/blockx.config.yaml'), { env: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.deployments.block!.worker.admission)).toBe(true);
    expect(() => {
      (config.deployments.block!.worker as { taskSlots: number }).taskSlots = 1;
    }).toThrow(TypeError);
  });

  it('finds the config via BLOCKX_CONFIG, via --config, and by searching up from a subfolder', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blockx-cfg-'));
    writeFileSync(path.join(dir, 'package.json'), '{"name":"x"}');
    writeFileSync(path.join(dir, 'blockx.config.yaml'), MINIMAL);
    writeFileSync(
      path.join(dir, 'other.yaml'),
      MINIMAL.replace('kind: bundle', 'kind: bundle\n    worker: { taskSlots: 7 }'),
    );
    mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
    expect(loadConfig({ cwd: path.join(dir, 'a', 'b'), env: {} }).configFile).toBe(
      path.join(dir, 'blockx.config.yaml'),
    );
    const viaEnv = loadConfig({ cwd: '/', env: { BLOCKX_CONFIG: path.join(dir, 'other.yaml') } });
    expect(viaEnv.deployments.bundle!.worker.taskSlots).toBe(7);
    const viaFlag = loadConfig({ cwd: dir, configPath: 'other.yaml', env: { BLOCKX_CONFIG: '/nope.yaml' } });
    expect(viaFlag.configFile).toBe(path.join(dir, 'other.yaml'));
  });

  it('reads package.json#blockx and reports positions inside package.json', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blockx-pkg-'));
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify(
        { name: 'x', blockx: { version: 1, deployments: { block: { kind: 'blok' } } } },
        null,
        2,
      ),
    );
    try {
      loadConfig({ cwd: dir, env: {} });
      expect.unreachable();
    } catch (err) {
      const [issue] = (err as ConfigError).issues;
      expect(issue).toMatchObject({
        path: 'deployments.block.kind',
        file: path.join(dir, 'package.json'),
        line: 7,
      });
    }
  });

  it('says where it searched when no config exists', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blockx-none-'));
    writeFileSync(path.join(dir, 'package.json'), '{"name":"x"}');
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(ConfigNotFoundError);
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/--config FILE or set BLOCKX_CONFIG/);
  });
});

// Each malformed variant: the text, and the issues expected (path, line, a message fragment).
const malformed: {
  name: string;
  text: string;
  env?: NodeJS.ProcessEnv;
  expect: Partial<ConfigIssue & { msg: string }>[];
}[] = [
  {
    name: 'unknown top-level key (with a suggestion)',
    text: `version: 1\ndeploymnts: {}\n`,
    expect: [{ path: 'deploymnts', line: 2, column: 1, msg: 'did you mean "deployments"' }],
  },
  {
    name: 'unknown nested key',
    text: `${MINIMAL}    coordinator:\n      maxCandidate: 4\n`,
    expect: [{ path: 'deployments.bundle.coordinator.maxCandidate', line: 8, column: 7, msg: 'unknown key' }],
  },
  {
    name: 'wrong type: string for an integer',
    text: `${MINIMAL}    worker:\n      taskSlots: lots\n`,
    expect: [{ path: 'deployments.bundle.worker.taskSlots', line: 8, column: 18, msg: 'must be integer' }],
  },
  {
    name: 'wrong type: number for a list',
    text: `version: 1\nplugins:\n  dirs: 3\n`,
    expect: [{ path: 'plugins.dirs', line: 3, msg: 'must be array' }],
  },
  {
    name: 'bad enum: deployment kind',
    text: `version: 1\ndeployments:\n  block:\n    kind: blok\n`,
    expect: [{ path: 'deployments.block.kind', line: 4, column: 11, msg: 'must be one of: block, bundle' }],
  },
  {
    name: 'bad enum: log level',
    text: `version: 1\nobservability:\n  logLevel: loud\n`,
    expect: [{ path: 'observability.logLevel', line: 3, msg: 'must be one of' }],
  },
  {
    name: 'missing required version',
    text: `deployments:\n  block:\n    kind: block\n`,
    expect: [{ path: '', line: 1, msg: 'missing required key "version"' }],
  },
  {
    name: 'missing deployment kind',
    text: `version: 1\ndeployments:\n  block:\n    worker: {}\n`,
    expect: [{ path: 'deployments.block', line: 4, msg: 'missing required key "kind"' }],
  },
  {
    name: 'red line out of range in the file',
    text: `${MINIMAL}    coordinator:\n      cpuRedLine: 1.5\n`,
    expect: [{ path: 'deployments.bundle.coordinator.cpuRedLine', line: 8, msg: 'must be <= 1' }],
  },
  {
    name: 'red line of zero',
    text: `${MINIMAL}    coordinator:\n      memoryRedLine: 0\n`,
    expect: [{ path: 'deployments.bundle.coordinator.memoryRedLine', line: 8, msg: 'must be > 0' }],
  },
  {
    name: 'cross-field: watch grace above heartbeat timeout',
    text: `${MINIMAL}    coordinator:\n      heartbeatTimeoutMs: 5000\n      watchGracePeriodMs: 6000\n`,
    expect: [
      {
        path: 'deployments.bundle.coordinator.watchGracePeriodMs',
        line: 9,
        column: 27,
        msg: 'must be <= heartbeatTimeoutMs (5000)',
      },
    ],
  },
  {
    name: 'cross-field: registry prefix of the wrong kind',
    text: `version: 1\ndeployments:\n  block:\n    kind: block\n    coordinator:\n      registryPrefixes: [/blockx/bundle-workers/]\n`,
    expect: [
      {
        path: 'deployments.block.coordinator.registryPrefixes.0',
        line: 6,
        column: 26,
        msg: 'deployment kind is block',
      },
    ],
  },
  {
    name: 'cross-field: malformed v2 registry prefix',
    text: `version: 1\ndeployments:\n  bundle:\n    kind: bundle\n    worker:\n      registryPrefix: /blockx/prod/lane/x/bundle-workers/\n`,
    expect: [{ path: 'deployments.bundle.worker.registryPrefix', line: 6, msg: 'invalid registry prefix' }],
  },
  {
    name: 'cross-field: task deadline above the cap',
    text: `${MINIMAL}    worker:\n      taskDeadlineMs: 9000\n      maxTaskTimeoutMs: 8000\n`,
    expect: [
      {
        path: 'deployments.bundle.worker.taskDeadlineMs',
        line: 8,
        msg: 'must be <= maxTaskTimeoutMs (8000)',
      },
    ],
  },
  {
    name: 'cross-field: inline slot TTL above maxSlotTtlMs',
    text: `${MINIMAL}    worker:\n      defaultTtlMs: 9000\n      maxSlotTtlMs: 8000\n`,
    expect: [
      { path: 'deployments.bundle.worker.defaultTtlMs', line: 8, msg: 'must be <= maxSlotTtlMs (8000)' },
    ],
  },
  {
    name: 'cross-field: coordinator slot TTL above the worker maxSlotTtlMs',
    text: `${MINIMAL}    coordinator:\n      slotTtlMs: 9000\n    worker:\n      maxSlotTtlMs: 8000\n`,
    expect: [
      {
        path: 'deployments.bundle.coordinator.slotTtlMs',
        line: 8,
        msg: 'must be <= worker.maxSlotTtlMs (8000)',
      },
    ],
  },
  {
    name: 'cross-field: primary key column not declared',
    text: `version: 1\ntables:\n  t:\n    columns: { a: { type: integer } }\n    primaryKey: [b]\n`,
    expect: [{ path: 'tables.t.primaryKey.0', line: 5, column: 18, msg: 'not declared' }],
  },
  {
    name: 'cross-field: block column of a text type',
    text: `version: 1\ntables:\n  t:\n    columns: { a: { type: text } }\n    primaryKey: [a]\n    blockColumn: a\n`,
    expect: [{ path: 'tables.t.blockColumn', line: 6, msg: 'must be integer or bigint' }],
  },
  {
    name: 'cross-field: up names an undeclared deployment',
    text: `${MINIMAL}up:\n  deployment: staging\n`,
    expect: [{ path: 'up.deployment', line: 8, msg: 'not declared' }],
  },
  {
    name: 'YAML syntax error',
    text: `version: 1\ndeployments:\n  block: [kind: block\n`,
    expect: [{ path: '', line: 4, msg: 'YAML syntax error' }],
  },
  {
    name: 'duplicate key',
    text: `version: 1\nversion: 1\n`,
    expect: [{ path: '', line: 2, column: 1, msg: 'duplicate key' }],
  },
  {
    name: 'bad listen address',
    text: `${MINIMAL}    worker:\n      listen: localhost\n`,
    expect: [{ path: 'deployments.bundle.worker.listen', line: 8, msg: 'must match pattern' }],
  },
  {
    name: 'bad deployment name',
    text: `version: 1\ndeployments:\n  Block-1:\n    kind: block\n`,
    expect: [{ path: 'deployments.Block-1', line: 3, column: 3, msg: 'invalid name' }],
  },
  {
    name: 'bad storage url',
    text: `version: 1\nstorage:\n  url: mysql://x\n`,
    expect: [{ path: 'storage.url', line: 3, msg: 'must match pattern' }],
  },
  {
    name: 'bad env var: not a number',
    text: MINIMAL,
    env: { COORDINATOR_MAX_CANDIDATES: 'abc' },
    expect: [
      {
        source: 'env',
        variable: 'COORDINATOR_MAX_CANDIDATES',
        msg: 'expected a positive integer, got "abc"',
      },
    ],
  },
  {
    name: 'bad env var: red line out of range',
    text: MINIMAL,
    env: { COORDINATOR_ERROR_RATE_RED_LINE: '0' },
    expect: [{ source: 'env', variable: 'COORDINATOR_ERROR_RATE_RED_LINE', msg: 'in (0, 1]' }],
  },
  {
    name: 'bad env var: cross-field rule blamed on the variable',
    text: MINIMAL,
    env: { COORDINATOR_WATCH_GRACE_PERIOD_MS: '20000' },
    expect: [
      {
        source: 'env',
        variable: 'COORDINATOR_WATCH_GRACE_PERIOD_MS',
        path: 'deployments.block.coordinator.watchGracePeriodMs',
      },
      {
        source: 'env',
        variable: 'COORDINATOR_WATCH_GRACE_PERIOD_MS',
        path: 'deployments.bundle.coordinator.watchGracePeriodMs',
      },
    ],
  },
  {
    name: 'bad env var: storage url',
    text: MINIMAL,
    env: { BLOCKX_STORAGE_URL: 'oracle://db' },
    expect: [{ source: 'env', variable: 'BLOCKX_STORAGE_URL', msg: 'expected sqlite:PATH' }],
  },
];

describe('resolveConfig: malformed configs name the path and line:column', () => {
  it.each(malformed)('$name', ({ text, env, expect: expected }) => {
    const issues = issuesOf(text, env ?? {});
    expect(issues).toHaveLength(expected.length);
    expected.forEach((exp, i) => {
      const { msg, ...fields } = exp;
      expect(issues[i]).toMatchObject({ source: 'file', ...fields });
      if (msg) expect(issues[i]!.message).toContain(msg);
      if ((fields.source ?? 'file') === 'file') expect(issues[i]!.file).toBe('/cfg/blockx.config.yaml');
    });
  });

  it('taskSlots above what a Coordinator accepts in a heartbeat is refused, from the file or the env', () => {
    const fromFile = issuesOf(`${MINIMAL}    worker:\n      taskSlots: 100001\n`);
    expect(fromFile.map((i) => i.path)).toContain('deployments.bundle.worker.taskSlots');
    const fromEnv = issuesOf(MINIMAL, { WORKER_TASK_SLOTS: '100001' });
    expect(fromEnv.map((i) => [i.path, i.message])).toContainEqual([
      'deployments.bundle.worker.taskSlots',
      'must be <= 100000, got 100001',
    ]);
    expect(() =>
      resolveConfig(parseConfigText(MINIMAL, '/x/c.yaml'), { env: { WORKER_TASK_SLOTS: '100000' } }),
    ).not.toThrow();
  });

  it('reports every problem at once: schema errors and env errors together', () => {
    const issues = issuesOf(
      `version: 1\nbogus: 1\ndeployments:\n  block:\n    kind: block\n    worker:\n      taskSlots: -1\n`,
      { WORKER_TASK_SLOTS: 'x', COORDINATOR_CPU_RED_LINE: '2' },
    );
    expect(issues.map((i) => i.variable ?? i.path)).toEqual([
      'bogus',
      'deployments.block.worker.taskSlots',
      'COORDINATOR_CPU_RED_LINE',
      'WORKER_TASK_SLOTS',
    ]);
  });

  it('formats issues as file:line:column: path: message', () => {
    try {
      resolveConfig(parseConfigText(`version: 1\nvershun: 2\n`, '/cfg/blockx.config.yaml'), { env: {} });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toContain('/cfg/blockx.config.yaml:2:1: vershun: unknown key "vershun"');
    }
  });
});

describe('environment overrides', () => {
  it('every documented environment variable is bound', () => {
    const names = new Set(ENV_BINDINGS.map((b) => b.variable));
    for (const v of [
      'COORDINATOR_LISTEN',
      'ETCD_ENDPOINTS',
      'COORDINATOR_REGISTRY_PREFIXES',
      'COORDINATOR_WORKER_RPC_TIMEOUT_MS',
      'COORDINATOR_ETCD_DIAL_TIMEOUT_MS',
      'COORDINATOR_ETCD_WATCH_RETRY_DELAY_MS',
      'COORDINATOR_HEARTBEAT_TIMEOUT_MS',
      'COORDINATOR_WATCH_GRACE_PERIOD_MS',
      'COORDINATOR_SLOT_TTL_MS',
      'COORDINATOR_MAX_CANDIDATES',
      'COORDINATOR_MAX_TIMEOUT_RETRIES',
      'COORDINATOR_CIRCUIT_BREAKER_THRESHOLD',
      'COORDINATOR_CIRCUIT_BREAKER_COOLDOWN_MS',
      'COORDINATOR_CPU_RED_LINE',
      'COORDINATOR_MEMORY_RED_LINE',
      'COORDINATOR_ERROR_RATE_RED_LINE',
      'TASK_DEADLINE_MS',
      'MAX_TASK_TIMEOUT_MS',
      'MAX_SLOT_TTL_MS',
      'RESULT_RETENTION_MS',
      'WORKER_HEARTBEAT_INTERVAL',
      'WATCH_DISCONNECT_GRACE_MS',
      'WORKER_LISTEN',
      'WORKER_ADVERTISE_ADDR',
      'WORKER_TASK_SLOTS',
      'WORKER_REGISTRY_PREFIX',
      'CALL_DEADLINE_MS',
      'BLOCKX_FUNCTIONS_DIR',
      'BLOCKX_STORAGE_URL',
      'BLOCKX_PROMETHEUS_LISTEN_ADDR',
      'BLOCKX_PROMETHEUS_PATH',
      'BLOCKX_LOG_LEVEL',
    ]) {
      expect(names, v).toContain(v);
    }
  });

  it('applies typed values over the file and defaults, to the chosen deployment only', () => {
    const config = resolveConfig(parseConfigText(MINIMAL, '/cfg/blockx.config.yaml'), {
      env: {
        COORDINATOR_MAX_CANDIDATES: '7',
        COORDINATOR_REGISTRY_PREFIXES: '/blockx/test/lanes/default/bundle-workers/, /blockx/bundle-workers/',
        ETCD_ENDPOINTS: 'http://127.0.0.1:2379,http://127.0.0.1:22379',
        WORKER_TASK_SLOTS: '5',
        BLOCKX_FUNCTIONS_DIR: 'fns',
        BLOCKX_LOG_LEVEL: 'debug',
      },
      deployments: ['bundle'],
    });
    expect(config.deployments.bundle!.coordinator.maxCandidates).toBe(7);
    expect(config.deployments.bundle!.coordinator.registryPrefixes).toEqual([
      '/blockx/test/lanes/default/bundle-workers/',
      '/blockx/bundle-workers/',
    ]);
    expect(config.deployments.bundle!.worker.taskSlots).toBe(5);
    expect(config.deployments.block!.coordinator.maxCandidates).toBe(3);
    expect(config.registry.etcd.endpoints).toEqual(['http://127.0.0.1:2379', 'http://127.0.0.1:22379']);
    expect(config.functions.dir).toBe('/cfg/fns');
    expect(config.observability.logLevel).toBe('debug');
  });

  it('flags override env, and errors name the flag', () => {
    const text = MINIMAL;
    const config = resolveConfig(parseConfigText(text, '/cfg/blockx.config.yaml'), {
      env: { WORKER_LISTEN: ':7000' },
      deployments: ['block'],
      flags: [{ path: ['deployments', 'block', 'worker', 'listen'], value: ':7001', flag: '--listen' }],
    });
    expect(config.deployments.block!.worker.listen).toBe(':7001');
    try {
      resolveConfig(parseConfigText(text, '/cfg/blockx.config.yaml'), {
        env: {},
        deployments: ['block'],
        flags: [
          {
            path: ['deployments', 'block', 'coordinator', 'watchGracePeriodMs'],
            value: 99_999,
            flag: '--watch-grace',
          },
        ],
      });
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).issues[0]).toMatchObject({ source: 'flag', variable: '--watch-grace' });
    }
  });

  it('an unknown --deployment is an error listing the declared ones', () => {
    const issues = (() => {
      try {
        resolveConfig(parseConfigText(MINIMAL, '/cfg/x.yaml'), { env: {}, deployments: ['staging'] });
      } catch (err) {
        return (err as ConfigError).issues;
      }
      return [];
    })();
    expect(issues[0]?.message).toContain('unknown deployment "staging" (declared: block, bundle)');
  });
});

describe('functions.retry: call retries per function (docs/retries.md § Call level)', () => {
  it('is empty by default, and the worker retries no spent budget', () => {
    const config = resolveConfig(parseConfigText(MINIMAL, '/cfg/blockx.config.yaml'), { env: {} });
    expect(config.functions.retry).toEqual({});
    expect(config.deployments.block!.worker.callRetry.retryOn).toEqual(['executor_crash', 'io', 'user']);
  });

  it("keeps each function's fields as written, without defaults (a left-out field takes the worker's)", () => {
    const text = `${MINIMAL}functions:
  retry:
    slow_fn: { retryOn: [deadline, executor_crash] }
    flaky: { maxAttempts: 6 }
`;
    const config = resolveConfig(parseConfigText(text, '/cfg/blockx.config.yaml'), { env: {} });
    expect(config.functions.retry).toEqual({
      slow_fn: { retryOn: ['deadline', 'executor_crash'] },
      flaky: { maxAttempts: 6 },
    });
  });

  it.each([
    ['an unknown kind', '{ retryOn: [timeout] }', 'functions.retry.f.retryOn.0'],
    ['an unknown field', '{ attempts: 2 }', 'functions.retry.f.attempts'],
    ['no attempt at all', '{ maxAttempts: 0 }', 'functions.retry.f.maxAttempts'],
  ])('refuses %s, naming the path and line', (_name, entry, at) => {
    const issues = issuesOf(`${MINIMAL}functions:\n  retry:\n    f: ${entry}\n`);
    expect(issues[0]).toMatchObject({ path: at, line: 9 });
  });
});

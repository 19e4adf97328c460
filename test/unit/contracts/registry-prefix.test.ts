import { describe, expect, it } from 'vitest';
import {
  LEGACY_BLOCK_WORKER_REGISTRY_PREFIX,
  LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX,
  PROD_DEFAULT_BLOCK_WORKER_REGISTRY_PREFIX,
  PROD_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX,
  TEST_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX,
  defaultRegistryPrefixes,
  parseRegistryPrefix,
  validateRegistryPrefixes,
  workerAddrFromKey,
  workerKey,
} from '../../../src/contracts/registry-prefix.js';

describe('registry prefix constants', () => {
  it('are the documented values (docs/architecture.md § etcd keys)', () => {
    expect([
      LEGACY_BLOCK_WORKER_REGISTRY_PREFIX,
      LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX,
      PROD_DEFAULT_BLOCK_WORKER_REGISTRY_PREFIX,
      PROD_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX,
      TEST_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX,
    ]).toEqual([
      '/blockx/workers/',
      '/blockx/bundle-workers/',
      '/blockx/prod/lanes/default/workers/',
      '/blockx/prod/lanes/default/bundle-workers/',
      '/blockx/test/lanes/default/bundle-workers/',
    ]);
  });
});

describe('parseRegistryPrefix', () => {
  it.each([
    { p: '/blockx/workers/', want: { format: 'legacy', kind: 'block' } },
    { p: '/blockx/bundle-workers/', want: { format: 'legacy', kind: 'bundle' } },
    {
      p: '/blockx/prod/lanes/default/workers/',
      want: { format: 'v2', kind: 'block', env: 'prod', lane: 'default' },
    },
    {
      p: '/blockx/prod/lanes/default/bundle-workers/',
      want: { format: 'v2', kind: 'bundle', env: 'prod', lane: 'default' },
    },
    {
      p: '/blockx/test/lanes/default/bundle-workers/',
      want: { format: 'v2', kind: 'bundle', env: 'test', lane: 'default' },
    },
    { p: '/blockx/0/lanes/a_b-9/workers/', want: { format: 'v2', kind: 'block', env: '0', lane: 'a_b-9' } },
    {
      p: '/blockx/staging-2/lanes/canary/bundle-workers/',
      want: { format: 'v2', kind: 'bundle', env: 'staging-2', lane: 'canary' },
    },
  ])('accepts $p', ({ p, want }) => {
    const r = parseRegistryPrefix(p);
    expect(r).toEqual({ ok: true, value: { prefix: p, ...want } });
  });

  it.each([
    { p: '', why: /must not be empty/ },
    { p: 'blockx/workers/', why: /start with '\/'/ },
    { p: '/blockx/workers', why: /end with '\/'/ },
    { p: '/blockx/prod/lanes/default/workers', why: /end with '\/'/ },
    { p: '/', why: /expected/ },
    { p: '/blockx/', why: /expected/ },
    { p: '/blockx//workers/', why: /expected/ },
    { p: '/blockx/tasks/', why: /expected/ },
    { p: '/other/workers/', why: /expected/ },
    { p: '/blockx/workers/extra/', why: /expected/ },
    { p: '/blockx/prod/lanes//workers/', why: /expected/ },
    { p: '/blockx//lanes/default/workers/', why: /expected/ },
    { p: '/blockx/Prod/lanes/default/workers/', why: /expected/ },
    { p: '/blockx/prod/lanes/Default/workers/', why: /expected/ },
    { p: '/blockx/-prod/lanes/default/workers/', why: /expected/ },
    { p: '/blockx/prod/lanes/_x/workers/', why: /expected/ },
    { p: '/blockx/pr od/lanes/default/workers/', why: /expected/ },
    { p: '/blockx/prod/lane/default/workers/', why: /expected/ },
    { p: '/blockx/prod/lanes/default/executors/', why: /expected/ },
    { p: '/blockx/prod/lanes/default/workers/x/', why: /expected/ },
    { p: '//blockx/workers/', why: /expected/ },
    { p: '/blockx/workers/lanes/default/workers/', why: /reserved/ },
    { p: '/blockx/bundle-workers/lanes/default/bundle-workers/', why: /reserved/ },
  ])('rejects $p', ({ p, why }) => {
    const r = parseRegistryPrefix(p);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('REGISTRY_PREFIX_INVALID');
    expect(r.error.prefix).toBe(p);
    expect(r.error.message).toMatch(why);
  });
});

describe('validateRegistryPrefixes', () => {
  it.each([
    { deployment: 'block' as const, prefixes: ['/blockx/workers/'] },
    { deployment: 'block' as const, prefixes: ['/blockx/workers/', '/blockx/prod/lanes/default/workers/'] },
    { deployment: 'bundle' as const, prefixes: ['/blockx/test/lanes/default/bundle-workers/'] },
  ])('accepts $prefixes for $deployment', ({ deployment, prefixes }) => {
    const r = validateRegistryPrefixes(prefixes, deployment);
    expect(r.ok && r.value.map((p) => p.prefix)).toEqual(prefixes);
  });

  it.each([
    { name: 'an empty list', deployment: 'block' as const, prefixes: [], codes: ['REGISTRY_PREFIXES_EMPTY'] },
    {
      name: 'a bundle prefix on a block coordinator',
      deployment: 'block' as const,
      prefixes: ['/blockx/bundle-workers/'],
      codes: ['REGISTRY_PREFIX_KIND_MISMATCH'],
    },
    {
      name: 'a block prefix on a bundle coordinator',
      deployment: 'bundle' as const,
      prefixes: ['/blockx/bundle-workers/', '/blockx/prod/lanes/default/workers/'],
      codes: ['REGISTRY_PREFIX_KIND_MISMATCH'],
    },
    {
      name: 'a duplicate',
      deployment: 'bundle' as const,
      prefixes: ['/blockx/bundle-workers/', '/blockx/bundle-workers/'],
      codes: ['REGISTRY_PREFIX_DUPLICATE'],
    },
    {
      name: 'every problem at once',
      deployment: 'block' as const,
      prefixes: ['/blockx/workers', '/blockx/workers/', '/blockx/bundle-workers/', '/blockx/workers/'],
      codes: ['REGISTRY_PREFIX_INVALID', 'REGISTRY_PREFIX_KIND_MISMATCH', 'REGISTRY_PREFIX_DUPLICATE'],
    },
  ])('rejects $name', ({ deployment, prefixes, codes }) => {
    const r = validateRegistryPrefixes(prefixes, deployment);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.code)).toEqual(codes);
  });

  it('names the index of each bad entry', () => {
    const r = validateRegistryPrefixes(['/blockx/workers/', 'nope', '/blockx/bundle-workers/'], 'block');
    expect(r.ok ? [] : r.errors.map((e) => [e.index, e.prefix])).toEqual([
      [1, 'nope'],
      [2, '/blockx/bundle-workers/'],
    ]);
  });
});

describe('defaults and keys', () => {
  it('uses the documented profile defaults, which validate for their deployment', () => {
    expect(defaultRegistryPrefixes('block')).toEqual(['/blockx/workers/']);
    expect(defaultRegistryPrefixes('bundle')).toEqual([
      '/blockx/bundle-workers/',
      '/blockx/prod/lanes/default/bundle-workers/',
    ]);
    for (const d of ['block', 'bundle'] as const)
      expect(validateRegistryPrefixes(defaultRegistryPrefixes(d), d).ok).toBe(true);
  });

  it('builds and splits worker keys', () => {
    const key = workerKey('/blockx/workers/', '10.0.0.7:9090');
    expect(key).toBe('/blockx/workers/10.0.0.7:9090');
    expect(workerAddrFromKey('/blockx/workers/', key)).toBe('10.0.0.7:9090');
    expect(workerAddrFromKey('/blockx/bundle-workers/', key)).toBeUndefined();
    expect(workerAddrFromKey('/blockx/workers/', '/blockx/workers/')).toBeUndefined();
  });
});

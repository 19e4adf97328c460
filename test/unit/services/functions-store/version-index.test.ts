// The version index (src/services/functions-store/version-index.ts): bounded history, current always
// kept, prefixes resolved uniquely, strict parsing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_KEPT_VERSIONS } from '../../../../src/services/functions-store/bundle-limits.js';
import {
  EMPTY_INDEX,
  applyDeploy,
  applyUse,
  encodeIndex,
  parseIndex,
  resolveVersion,
  type VersionEntry,
  type VersionIndex,
} from '../../../../src/services/functions-store/version-index.js';

const hex = (n: number) => n.toString(16).padStart(16, '0');
const entry = (n: number, at = n): VersionEntry => ({
  version: hex(n),
  digest: hex(n) + 'f'.repeat(48),
  fileNames: ['a.ts'],
  sourceBytes: 10,
  storedBytes: 5,
  deployedAtMs: at,
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe('applyDeploy', () => {
  it('appends and makes current; redeploying a kept version re-selects it and keeps its first deployedAtMs', () => {
    let idx: VersionIndex = EMPTY_INDEX;
    idx = applyDeploy(idx, entry(1), 10).index;
    idx = applyDeploy(idx, entry(2), 20).index;
    expect(idx).toMatchObject({ current: hex(2), changedAtMs: 20 });
    const again = applyDeploy(idx, entry(1, 99), 30);
    expect(again).toMatchObject({ changed: true, pruned: [] });
    expect(again.index.current).toBe(hex(1));
    expect(again.entry.deployedAtMs).toBe(1);
    expect(again.index.versions.map((v) => v.version)).toEqual([hex(1), hex(2)]);
    expect(applyDeploy(again.index, entry(1), 40).changed).toBe(false);
  });

  it(`keeps ${MAX_KEPT_VERSIONS} versions and prunes the oldest`, () => {
    let idx: VersionIndex = EMPTY_INDEX;
    const pruned: string[] = [];
    for (let i = 1; i <= MAX_KEPT_VERSIONS + 3; i++) {
      const ch = applyDeploy(idx, entry(i), i);
      pruned.push(...ch.pruned);
      idx = ch.index;
    }
    expect(pruned).toEqual([hex(1), hex(2), hex(3)]);
    expect(idx.versions).toHaveLength(MAX_KEPT_VERSIONS);
    expect(codeOf(() => resolveVersion(idx, hex(1)))).toBe('VERSION_UNKNOWN');
  });

  it('property: whatever the sequence of deploys and uses, the index stays valid and round-trips', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ deploy: fc.integer({ min: 1, max: 30 }) }),
            fc.record({ use: fc.integer({ min: 1, max: 30 }) }),
          ),
          {
            maxLength: 60,
          },
        ),
        (ops) => {
          let idx: VersionIndex = EMPTY_INDEX;
          let now = 0;
          for (const op of ops) {
            now += 1;
            if ('deploy' in op) {
              const ch = applyDeploy(idx, entry(op.deploy), now);
              expect(ch.pruned).not.toContain(ch.index.current);
              idx = ch.index;
              expect(idx.current).toBe(hex(op.deploy));
            } else {
              const before = idx;
              try {
                idx = applyUse(idx, hex(op.use), now).index;
                expect(idx.current).toBe(hex(op.use));
              } catch {
                expect(before.versions.some((v) => v.version === hex(op.use))).toBe(false);
              }
            }
            expect(idx.versions.length).toBeLessThanOrEqual(MAX_KEPT_VERSIONS);
            expect(new Set(idx.versions.map((v) => v.version)).size).toBe(idx.versions.length);
            if (idx.current !== '') expect(idx.versions.some((v) => v.version === idx.current)).toBe(true);
            expect(parseIndex(encodeIndex(idx))).toEqual(idx);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('resolveVersion / applyUse', () => {
  const idx = [entry(0xabc1), entry(0xabc2), entry(0xdef0)].reduce<VersionIndex>(
    (i, e) => applyDeploy(i, e, 1).index,
    EMPTY_INDEX,
  );

  it.each([
    ['a full id', hex(0xdef0), hex(0xdef0)],
    ['a unique prefix', '000000000000def', hex(0xdef0)],
    ['upper case and spaces', ` ${hex(0xabc1).toUpperCase()} `, hex(0xabc1)],
  ])('%s resolves', (_what, prefix, version) => {
    expect(resolveVersion(idx, prefix).version).toBe(version);
  });

  it.each([
    ['an ambiguous prefix', '000000000000abc', 'VERSION_AMBIGUOUS'],
    ['an unknown version', 'ffff', 'VERSION_UNKNOWN'],
    ['too short a prefix', '000', 'VERSION_UNKNOWN'],
    ['not hex', 'main', 'VERSION_UNKNOWN'],
  ])('%s is refused', (_what, prefix, code) => {
    expect(codeOf(() => resolveVersion(idx, prefix))).toBe(code);
  });

  it('an empty index says nothing was deployed; using the current version changes nothing', () => {
    expect(codeOf(() => resolveVersion(EMPTY_INDEX, 'abcd'))).toBe('NO_DEPLOYMENT');
    expect(applyUse(idx, hex(0xdef0), 5).changed).toBe(false);
    expect(applyUse(idx, hex(0xabc1), 5).index).toMatchObject({ current: hex(0xabc1), changedAtMs: 5 });
  });

  it('the unknown-version message names the retention rule', () => {
    expect(() => resolveVersion(idx, 'ffff')).toThrow(
      `keeps the last ${MAX_KEPT_VERSIONS} deployed versions`,
    );
  });
});

describe('parseIndex', () => {
  const good = applyDeploy(EMPTY_INDEX, entry(1), 1).index;
  const mutate = (edit: (r: Record<string, unknown>) => void): Buffer => {
    const r = JSON.parse(encodeIndex(good).toString('utf8')) as Record<string, unknown>;
    edit(r);
    return Buffer.from(JSON.stringify(r));
  };

  it('no key is the empty index', () => {
    expect(parseIndex(undefined)).toEqual(EMPTY_INDEX);
  });

  it.each([
    ['not JSON', Buffer.from('{')],
    ['another format', mutate((r) => (r['format'] = 'x'))],
    ['current not kept', mutate((r) => (r['current'] = hex(9)))],
    [
      'a digest that does not extend its version',
      mutate((r) => ((r['versions'] as Record<string, unknown>[])[0]!['digest'] = 'a'.repeat(64))),
    ],
    ['a duplicate version', mutate((r) => (r['versions'] = [entry(1), entry(1)]))],
    [
      'too many versions',
      mutate((r) => (r['versions'] = Array.from({ length: MAX_KEPT_VERSIONS + 1 }, (_, i) => entry(i + 1)))),
    ],
    ['oversized', Buffer.alloc(70_000, 0x20)],
  ])('refuses %s as BUNDLE_CORRUPT', (_what, value) => {
    expect(codeOf(() => parseIndex(value))).toBe('BUNDLE_CORRUPT');
  });
});

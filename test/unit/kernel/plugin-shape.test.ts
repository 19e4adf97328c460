// The shape check of a plugin's default export (src/kernel/plugin-shape.ts): the optional `fusion` member
// (docs/task-fusion.md) must be an object with key() and the kind's many-task entry point.
import { describe, expect, it } from 'vitest';
import { checkPluginExport } from '../../../src/kernel/plugin-shape.js';

const build = () => ({ calls: [] });
const execute = async () => [];
const key = () => 'k';

describe('checkPluginExport: fusion', () => {
  it.each([
    ['builder', { build, fusion: { key, buildMany: async (): Promise<null> => null } }, []],
    ['writer', { execute, fusion: { key, executeMany: async () => [] } }, []],
    ['builder', { build }, []],
    ['builder', { build, fusion: { key } }, [/buildMany/]],
    ['builder', { build, fusion: { key, executeMany: async () => [] } }, [/buildMany/]],
    ['writer', { execute, fusion: { buildMany: async (): Promise<null> => null, key } }, [/executeMany/]],
    ['writer', { execute, fusion: 'yes' }, [/fusion must be an object/]],
    ['builder', { build, fusion: null }, [/fusion must be an object/]],
  ] as const)('%s %j', (kind, impl, problems) => {
    const found = checkPluginExport(kind, impl);
    expect(found).toHaveLength(problems.length);
    problems.forEach((p, i) => expect(found[i]).toMatch(p));
  });
});

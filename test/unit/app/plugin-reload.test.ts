// Loading plugins again (src/app/plugin-reload.ts): a JS writer package in a temp plugins folder is
// changed, broken, moved and listed; each reload step is checked against the live registry it swaps
// into and the lines it reports. Files only (the reload imports the package anew through tsx).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPluginReload, pluginsFingerprint } from '../../../src/app/plugin-reload.js';
import { resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';
import type { BlockxConfig } from '../../../src/kernel/config-types.js';
import { bootKernelWithConfig } from '../../../src/kernel/kernel.js';
import { LivePluginRegistry } from '../../../src/kernel/plugin-registry.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A project with `plugins/tag` (writer TagResultHandler answering `tag`) and a config listing plugins/. */
function project(tag: string): { root: string; config: () => BlockxConfig; setTag: (t: string) => void } {
  const root = mkdtempSync(path.join(tmpdir(), 'blockx-plugin-reload-'));
  dirs.push(root);
  const pkg = path.join(root, 'plugins', 'tag');
  mkdirSync(path.join(pkg, 'src'), { recursive: true });
  writeFileSync(
    path.join(pkg, 'package.json'),
    JSON.stringify({
      name: 'tag-writer',
      version: '1.0.0',
      type: 'module',
      main: 'src/index.js',
      blockx: { kind: 'writer', type: 'TagResultHandler', schema: './schema.json' },
    }),
  );
  writeFileSync(path.join(pkg, 'schema.json'), '{"type":"object"}');
  const setTag = (t: string): void => {
    writeFileSync(
      path.join(pkg, 'src', 'index.js'),
      // The tag lives in a second module, so a reload must import that one anew too.
      `import { tag } from './tag.js';\nexport default { execute: async () => [{ pluginName: tag, success: true }] };\n` +
        (t === 'broken' ? 'export const broken = ;\n' : ''),
    );
    writeFileSync(path.join(pkg, 'src', 'tag.js'), `export const tag = ${JSON.stringify(t)};\n`);
  };
  setTag(tag);
  const config = () =>
    resolveConfig(
      parseConfigText(
        'version: 1\nplugins:\n  dirs: [plugins]\ndeployments:\n  block:\n    kind: block\n',
        path.join(root, 'blockx.config.yaml'),
      ),
      { env: {} },
    );
  return { root, config, setTag };
}

async function tagOf(live: LivePluginRegistry): Promise<unknown> {
  const writer = live.writers.get('TagResultHandler');
  const results = await writer!.impl.execute({} as never, {}, [], {} as never);
  return (results as { pluginName: string }[])[0]?.pluginName;
}

/** A project at tag v1, its plugins loaded into a live registry, and its reload step. */
async function started() {
  const p = project('v1');
  const config = p.config();
  const live = new LivePluginRegistry((await bootKernelWithConfig(config)).plugins);
  const lines: string[] = [];
  const reload = await createPluginReload({
    live,
    running: config,
    report: (l, s) => lines.push(`${l}: ${s}`),
  });
  return { p, config, live, lines, reload };
}

describe('createPluginReload', () => {
  it('loads a changed package again (its every module), and nothing when nothing changed', async () => {
    const { p, config, live, lines, reload } = await started();
    expect(await tagOf(live)).toBe('v1');
    await reload(config);
    expect(lines).toEqual([]);
    const before = live.writers;
    p.setTag('v2');
    await reload(config);
    expect(await tagOf(live)).toBe('v2');
    expect(before.get('TagResultHandler')).not.toBe(live.writers.get('TagResultHandler'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^info: config reload: plugins loaded again; builders .*CallListCallConfig.*; writers .*TagResultHandler/,
      ),
    ]);
  });

  it('a package that does not load is reported and the running plugins keep serving', async () => {
    const { p, config, live, lines, reload } = await started();
    const running = live.writers;
    p.setTag('broken');
    await reload(config);
    expect(live.writers).toBe(running);
    expect(lines).toEqual([
      expect.stringMatching(
        /^error: config reload: the plugins do not load; the running ones keep serving: .*tag-writer.*importing src\/index\.js failed/,
      ),
    ]);
    // Fixed again: loaded (the failed load never counted as the running one).
    p.setTag('v3');
    await reload(config);
    expect(await tagOf(live)).toBe('v3');
  });

  it('a plugins section without the package drops its type', async () => {
    const { p, live, reload } = await started();
    const without = resolveConfig(
      parseConfigText(
        'version: 1\ndeployments:\n  block:\n    kind: block\n',
        path.join(p.root, 'blockx.config.yaml'),
      ),
      { env: {} },
    );
    await reload(without);
    expect(live.writers.has('TagResultHandler')).toBe(false);
    expect(live.writers.has('ReturnValueResultHandler')).toBe(true);
  });
});

describe('pluginsFingerprint', () => {
  it('moves with a file of a package and with the plugins section, not otherwise', async () => {
    const p = project('v1');
    const a = await pluginsFingerprint(p.config());
    expect(await pluginsFingerprint(p.config())).toBe(a);
    writeFileSync(path.join(p.root, 'plugins', 'tag', 'README.md'), 'docs');
    const b = await pluginsFingerprint(p.config());
    expect(b).not.toBe(a);
    // node_modules and dot-files of a package are not its source.
    mkdirSync(path.join(p.root, 'plugins', 'tag', 'node_modules'));
    writeFileSync(path.join(p.root, 'plugins', 'tag', 'node_modules', 'x.js'), '');
    writeFileSync(path.join(p.root, 'plugins', 'tag', '.cache'), '');
    expect(await pluginsFingerprint(p.config())).toBe(b);
    // A file saved with the same content is no change.
    p.setTag('v1');
    expect(await pluginsFingerprint(p.config())).toBe(b);
  });
});

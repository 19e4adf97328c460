// Plugins as a user's project has them, run by the built CLI from that project's folder (docs/plugins.md
// § Where plugins are found):
// - a config that names no plugin folders still has every built-in plugin, found inside the package, not
//   in the project's folder;
// - plugin packages in a folder outside the project, with no node_modules anywhere above them (a package a
//   project links in from elsewhere), JavaScript and TypeScript, import values from `blockx/plugin`: it
//   resolves to the BlockX that loads them (without that: "Cannot find package 'blockx'").
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, runBlockx } from '../support/cli.js';
import { useTempDirs } from '../support/temp-dirs.js';

const tempDir = useTempDirs();

/** A project folder holding only a config: `version`, one deployment, and `extra` lines. */
function project(extra: string[] = []): string {
  const dir = tempDir('blockx-project-');
  writeFileSync(
    path.join(dir, 'blockx.config.yaml'),
    ['version: 1', 'deployments:', '  block:', '    kind: block', ...extra, ''].join('\n'),
  );
  return dir;
}

/** The types the package's built-in plugins declare, read from their manifests. */
function builtinTypes(kind: 'builders' | 'writers'): string[] {
  const dir = path.join(REPO, 'plugins', kind);
  return readdirSync(dir)
    .map(
      (name) =>
        (
          JSON.parse(readFileSync(path.join(dir, name, 'package.json'), 'utf8')) as {
            blockx: { type: string };
          }
        ).blockx.type,
    )
    .sort();
}

/** `blockx plugins --json`'s types by kind. */
async function listedTypes(cwd: string): Promise<{ builder: string[]; writer: string[] }> {
  const run = await runBlockx(['plugins', '--json'], { cwd });
  expect(run.code, run.stderr).toBe(0);
  const listed = JSON.parse(run.stdout) as { kind: 'builder' | 'writer'; type: string }[];
  const of = (kind: string) =>
    listed
      .filter((p) => p.kind === kind)
      .map((p) => p.type)
      .sort();
  return { builder: of('builder'), writer: of('writer') };
}

describe('plugins of a project outside the repository', () => {
  it('a config naming no plugin folders has every built-in plugin', async () => {
    const types = await listedTypes(project());
    expect(types.builder).toEqual(builtinTypes('builders'));
    expect(types.writer).toEqual(builtinTypes('writers'));
    expect(types.writer.length).toBeGreaterThan(3);
  });

  it('plugin packages outside the project import blockx/plugin from the BlockX that loads them', async () => {
    const outside = tempDir('blockx-outside-plugins-');
    cpSync(path.join(REPO, 'test/fixtures/plugins/imports-blockx'), outside, { recursive: true });
    const dir = project(['plugins:', `  dirs: [${JSON.stringify(outside)}]`]);
    const types = await listedTypes(dir);
    expect(types.writer).toEqual(
      [...builtinTypes('writers'), 'JsImportsBlockxResultHandler', 'TsImportsBlockxResultHandler'].sort(),
    );
  });
});

// `blockx init [DIR]` as a user runs it (docs/getting-started.md): what it writes, that the project it
// makes validates as it is (config, the example plugin, every task file), that a folder that is not empty
// is refused unless --force, and that --force merges package.json instead of replacing it. The install
// of the packed package into such a project, and a cluster running in it, is test/e2e/packed-project.test.ts.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, runBlockx } from '../support/cli.js';
import { useTempDirs } from '../support/temp-dirs.js';

const tempDir = useTempDirs();

const VERSION = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string })
  .version;

const FILES = [
  '.gitignore',
  'README.md',
  'blockx.config.yaml',
  'functions/erc20_transfers.ts',
  'functions/hello_world.py',
  'package.json',
  'plugins/jsonl-writer/README.md',
  'plugins/jsonl-writer/package.json',
  'plugins/jsonl-writer/schema.json',
  'plugins/jsonl-writer/src/index.ts',
  'tasks/hello-world.json',
  'tasks/transfers-jsonl.json',
  'tasks/transfers.json',
  'tsconfig.json',
];

describe('blockx init', () => {
  it('makes a project in a new folder that validates as it is', async () => {
    const parent = tempDir('blockx-init-');
    const run = await runBlockx(['init', 'my-app', '--json'], { cwd: parent });
    expect(run.code, run.stderr).toBe(0);
    const dir = path.join(parent, 'my-app');
    expect(JSON.parse(run.stdout)).toEqual({
      dir,
      files: FILES,
      next: ['cd my-app', 'npm install', 'npx blockx up --once'],
    });
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg).toMatchObject({ name: 'my-app', type: 'module', dependencies: { blockx: `^${VERSION}` } });
    const config = readFileSync(path.join(dir, 'blockx.config.yaml'), 'utf8');
    const schemaLink = /^# yaml-language-server: \$schema=\.\/node_modules\/blockx\/(\S+)$/m.exec(config);
    // The link points at a file the package ships (package.json#files has schemas/).
    expect(readdirSync(path.join(REPO, path.dirname(schemaLink![1]!)))).toContain(
      path.basename(schemaLink![1]!),
    );
    const plugin = readFileSync(path.join(dir, 'plugins/jsonl-writer/src/index.ts'), 'utf8');
    expect(plugin.match(/from '(blockx[^']*)'/g)).toEqual(["from 'blockx/plugin'"]);

    // The project as it is: the config, its own plugin (beside every built-in one) and each task file.
    const validate = await runBlockx(['validate', ...FILES.filter((f) => f.startsWith('tasks/'))], {
      cwd: dir,
    });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toMatch(/writers .*JsonLinesResultHandler/);
  });

  it('refuses a folder that is not empty, writing nothing, unless --force', async () => {
    const dir = tempDir('blockx-init-');
    writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    const refused = await runBlockx(['init'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is not empty \(1 entries\); pass --force/);
    expect(readdirSync(dir)).toEqual(['notes.txt']);

    const forced = await runBlockx(['init', '.', '--force'], { cwd: dir });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/^next:\n {2}npm install\n {2}npx blockx up --once\n$/m);
    expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('mine');
    expect(readdirSync(path.join(dir, 'functions')).sort()).toEqual(['erc20_transfers.ts', 'hello_world.py']);
  });

  it('--force merges an existing package.json: what it has stays, what is missing is added', async () => {
    const dir = tempDir('blockx-init-');
    mkdirSync(path.join(dir, 'node_modules'));
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({
        name: 'mine',
        scripts: { start: 'node server.js' },
        dependencies: { blockx: 'file:../blockx-1.2.3.tgz', left: '1.0.0' },
      }),
    );
    const run = await runBlockx(['init', '--force'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))).toEqual({
      name: 'mine',
      type: 'module',
      scripts: { start: 'node server.js', validate: 'blockx validate tasks/*.json' },
      dependencies: { blockx: 'file:../blockx-1.2.3.tgz', left: '1.0.0' },
      devDependencies: { '@types/node': '^20.19.0' },
    });
  });

  it('a package.json that is not JSON is a usage error naming it, and nothing is written', async () => {
    const dir = tempDir('blockx-init-');
    writeFileSync(path.join(dir, 'package.json'), '{ nope');
    const run = await runBlockx(['init', '--force'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/package\.json of the folder is not JSON/);
    expect(readdirSync(dir)).toEqual(['package.json']);
  });
});

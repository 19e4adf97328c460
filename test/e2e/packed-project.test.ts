// BlockX as a user installs it (issue 33; docs/getting-started.md): `npm pack` of this repository, the
// tarball installed into a fresh project under the OS temp dir (no path back into the repository: the
// project sees only the tarball and the machine's npm cache), then, in that project:
//
//   npx blockx init . --force           the project's files, package.json merged (the tarball dependency stays)
//   npm install ../plugin               a writer plugin package of its own, outside the project, linked by
//                                       npm, importing only blockx/plugin (and having no node_modules)
//   functions: a TypeScript one importing a value from blockx/function, and a Python one
//   npx blockx up --once                the demo backfill, from the installed package's plugins: exit 0
//   blockx up --no-demo (serving), a submit through the Python function, and a 50-block backfill through
//   the TypeScript function and the own plugin, checked file by file against the events table.
//
// better-sqlite3's installer looks for a prebuilt binary before it compiles one: offline, with none in the
// npm cache, `npm install` compiled it (183 s of the file's 235 s at load 15-20). The test hands it the
// addon this repository's install built for the same Node, as a local prebuild (localPrebuilds below), so
// the install takes seconds, and the file runs beside the others (it was in the e2e-alone project while
// it compiled; npm still compiles it when that addon is missing or of another version).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, cleanEnv } from '../support/cli.js';
import { captureOutput, spawnTracked, stopGroup, waitForExit, waitForLine } from '../support/processes.js';
import { useTempDirs } from '../support/temp-dirs.js';

const tempDir = useTempDirs();
const INSTALL_TIMEOUT_MS = 8 * 60_000;
const BLOCKS = 50;
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
/** The machine is shared with other test files' processes: no red line may hold the workers out. */
const ENV = cleanEnv({ COORDINATOR_CPU_RED_LINE: '1', COORDINATOR_MEMORY_RED_LINE: '1' });

interface Run {
  readonly code: number | null;
  /** stdout, whole. */
  readonly stdout: string;
  /** stdout and stderr interleaved, the last of it: for messages. */
  readonly output: string;
}

/** Runs a command to its end, its output collected. */
async function run(
  cmd: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 120_000,
  env: NodeJS.ProcessEnv = ENV,
): Promise<Run> {
  const child = spawnTracked(cmd, args, { cwd, env });
  const output = captureOutput(child, 64_000);
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const timer = setTimeout(() => void stopGroup(child, 'SIGKILL', 0), timeoutMs);
  await waitForExit(child);
  clearTimeout(timer);
  return { code: child.exitCode, stdout, output: output.text() };
}

/**
 * The env that points better-sqlite3's installer (prebuild-install) at a folder of local prebuilds holding
 * the addon of this repository's node_modules, packed under the name it looks for
 * (`better-sqlite3-v<version>-node-v<abi>-<platform>-<arch>.tar.gz`); ENV alone when there is none.
 */
function localPrebuilds(root: string): NodeJS.ProcessEnv {
  const pkgDir = path.join(REPO, 'node_modules/better-sqlite3');
  const addon = 'build/Release/better_sqlite3.node';
  if (!existsSync(path.join(pkgDir, addon))) return ENV;
  const { version } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const dir = path.join(root, 'prebuilds');
  mkdirSync(dir);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}`;
  execFileSync('tar', ['-czf', path.join(dir, `${name}.tar.gz`), '-C', pkgDir, addon]);
  return { ...ENV, npm_config_better_sqlite3_local_prebuilds: dir };
}

/** The project's own writer plugin, outside the project: another type, same code as init's example. */
function writePlugin(root: string, app: string): string {
  const dir = path.join(root, 'plugin');
  cpSync(path.join(app, 'plugins/jsonl-writer'), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    name: string;
    blockx: { type: string };
  };
  manifest.name = 'blockx-plugin-own-lines';
  manifest.blockx.type = 'OwnLinesResultHandler';
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  const source = path.join(dir, 'src/index.ts');
  writeFileSync(
    source,
    readFileSync(source, 'utf8').replaceAll("'JsonLinesResultHandler'", "'OwnLinesResultHandler'"),
  );
  return dir;
}

const TS_FUNCTION = `import { RetryableError, type CallContext } from 'blockx/function';

/** One line per event: which block and which log. */
export default async function eventRef(ctx: CallContext, event: { block_number: number; idx: number }) {
  if (ctx.attempt > 5) throw new RetryableError('not reached');
  return { block: Number(event.block_number), idx: event.idx };
}
`;

const PY_FUNCTION = `async def main(ctx, name):
    return "hi, %s from python" % name
`;

describe('the packed package in a project of its own', () => {
  const root = tempDir('blockx-packed-');
  const app = path.join(root, 'app');
  let up: ChildProcess | undefined;

  afterAll(async () => {
    if (up) await stopGroup(up, 'SIGTERM', 10_000);
  });

  it(
    'installs, inits, loads an own plugin linked from outside, and runs the demo and a 50-block backfill through it',
    async () => {
      const pack = await run(
        'npm',
        ['pack', '--ignore-scripts', '--json', '--pack-destination', root, '--loglevel=error'],
        REPO,
      );
      expect(pack.code, pack.output).toBe(0);
      const [packed] = JSON.parse(pack.stdout) as {
        filename: string;
        unpackedSize: number;
        files: { path: string }[];
      }[];
      const tarball = packed!.filename;
      const files = packed!.files.map((f) => f.path);
      // What a project needs, and nothing of the repository's tests, benches, sources or secrets.
      for (const needed of [
        'bin/blockx.js',
        'dist/cli/main.js',
        'dist/plugin.d.ts',
        'schemas/blockx.config.schema.json',
      ])
        expect(files).toContain(needed);
      expect(files.filter((f) => /^plugins\/(builders|writers)\/[^/]+\/package\.json$/.test(f)).length).toBe(
        readdirSync(path.join(REPO, 'plugins/builders')).length +
          readdirSync(path.join(REPO, 'plugins/writers')).length,
      );
      const unwanted = files.filter(
        (f) =>
          /^(test|bench|docs|scripts|\.blockx)\//.test(f) ||
          /^plugins\/[^/]+\/[^/]+\/test\//.test(f) ||
          (f.startsWith('src/') && !f.startsWith('src/executor/python/')) ||
          /\.(map|pem|key|db|log)$/.test(f) ||
          f.includes('__pycache__'),
      );
      expect(unwanted).toEqual([]);
      expect(packed!.unpackedSize).toBeLessThan(8 * 1024 * 1024);

      mkdirSync(app);
      writeFileSync(path.join(app, 'package.json'), '{"name":"app","private":true}\n');
      const started = Date.now();
      const install = await run(
        'npm',
        ['install', ...NPM_FLAGS, `../${tarball}`],
        app,
        INSTALL_TIMEOUT_MS,
        localPrebuilds(root),
      );
      expect(install.code, install.output).toBe(0);
      const installSeconds = (Date.now() - started) / 1000;

      const init = await run('npx', ['blockx', 'init', '.', '--force', '--json'], app);
      expect(init.code, init.output).toBe(0);
      const pkg = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      expect(pkg.dependencies.blockx).toBe(`file:../${tarball}`);

      // An own plugin package beside the project, linked in by npm, listed by its package name.
      writePlugin(root, app);
      const linked = await run('npm', ['install', ...NPM_FLAGS, '../plugin'], app, INSTALL_TIMEOUT_MS);
      expect(linked.code, linked.output).toBe(0);
      const configFile = path.join(app, 'blockx.config.yaml');
      const config = readFileSync(configFile, 'utf8');
      expect(config).toContain('  dirs: [plugins]\n');
      writeFileSync(
        configFile,
        config.replace('  dirs: [plugins]\n', '  dirs: [plugins]\n  packages: [blockx-plugin-own-lines]\n'),
      );
      writeFileSync(path.join(app, 'functions/event_ref.ts'), TS_FUNCTION);
      writeFileSync(path.join(app, 'functions/greet.py'), PY_FUNCTION);

      const plugins = await run('npx', ['blockx', 'plugins'], app);
      expect(plugins.code, plugins.output).toBe(0);
      expect(plugins.output).toMatch(/writer\s+OwnLinesResultHandler\s+blockx-plugin-own-lines/);
      expect(plugins.output).toMatch(/writer\s+JsonLinesResultHandler\s+blockx-plugin-jsonl-writer/);
      // The built-in ones come from the installed package.
      expect(plugins.output).toMatch(/builder\s+BlockTableCallConfig\s+@blockx\/builder-block-table/);

      const once = await run(
        'npx',
        ['blockx', 'up', '--once', '--listen', '127.0.0.1:0', '--no-dashboard'],
        app,
        300_000,
      );
      expect(once.code, once.output).toBe(0);
      expect(once.output).toMatch(/^demo: SUCCEEDED: token_transfers holds \d+ rows for blocks 1\.\.20/m);

      const generate = await run(
        'npx',
        ['blockx', 'data', 'generate', '--chain', '1', '--blocks', String(BLOCKS)],
        app,
      );
      expect(generate.code, generate.output).toBe(0);

      up = spawnTracked(
        process.execPath,
        [
          path.join(app, 'node_modules/blockx/bin/blockx.js'),
          'up',
          '--no-demo',
          '--listen',
          '127.0.0.1:0',
          '--no-dashboard',
        ],
        { cwd: app, env: ENV },
      );
      const upOutput = captureOutput(up);
      await waitForLine(up, /^serving; press Ctrl-C/, 90_000);
      const coordinator = /coordinator listening on (\S+)/.exec(upOutput.text())?.[1] ?? '';
      expect(coordinator, upOutput.text()).not.toBe('');

      writeFileSync(
        path.join(app, 'tasks/greet.json'),
        JSON.stringify({
          task_id: 'greet-1',
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: { function: 'greet', callList: [['app']] },
          },
          resultHandler: { type: 'ReturnValueResultHandler', config: {} },
        }),
      );
      const submit = await run(
        'npx',
        ['blockx', 'submit', 'tasks/greet.json', '--coordinator', coordinator],
        app,
      );
      expect(submit.code, submit.output + upOutput.text()).toBe(0);
      expect(submit.output).toContain('["hi, app from python"]');

      writeFileSync(
        path.join(app, 'tasks/refs.json'),
        JSON.stringify({
          functionCallConfig: {
            type: 'BlockTableCallConfig',
            config: { function: 'event_ref', table: 'events', chainId: 1, block: { number: 1 } },
          },
          resultHandler: {
            type: 'OwnLinesResultHandler',
            config: { dir: 'refs', chainId: 1, block: { number: 1 } },
          },
        }),
      );
      const backfill = await run(
        'npx',
        [
          'blockx',
          'backfill',
          'tasks/refs.json',
          '--from',
          '1',
          '--to',
          String(BLOCKS),
          '--coordinator',
          coordinator,
          '--json',
        ],
        app,
        180_000,
      );
      expect(backfill.code, backfill.output + upOutput.text()).toBe(0);
      const summaryLine = backfill.stdout.trim().split('\n').pop() ?? '';
      expect(JSON.parse(summaryLine)).toMatchObject({
        summary: { blocks: BLOCKS, succeeded: BLOCKS, failed: 0 },
      });

      // Each block's file holds exactly its canonical events, one line each.
      const db = new Database(path.join(app, '.blockx/blockx.db'), { readonly: true });
      try {
        const events = db
          .prepare(
            `SELECT e.block_number AS block, e.idx AS idx FROM events e JOIN blocks b
               ON b.chain_id = e.chain_id AND b.number = e.block_number AND b.hash = e.block_hash
             WHERE e.chain_id = 1 AND b.canonical AND e.block_number BETWEEN 1 AND ? ORDER BY e.block_number, e.idx`,
          )
          .all(BLOCKS) as { block: number; idx: number }[];
        expect(events.length).toBeGreaterThan(BLOCKS);
        const files = readdirSync(path.join(app, 'refs/1')).sort((a, b) => parseInt(a) - parseInt(b));
        expect(files).toEqual(Array.from({ length: BLOCKS }, (_, i) => `${i + 1}.jsonl`));
        const lines = files.flatMap((f) =>
          readFileSync(path.join(app, 'refs/1', f), 'utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as { block: number; idx: number }),
        );
        const byBlockAndIdx = (a: { block: number; idx: number }, b: { block: number; idx: number }) =>
          a.block - b.block || a.idx - b.idx;
        expect(lines.sort(byBlockAndIdx)).toEqual(
          events.map((e) => ({ block: Number(e.block), idx: e.idx })),
        );
      } finally {
        db.close();
      }
      console.log(`packed-project: npm install of the tarball took ${installSeconds.toFixed(0)} s`);
    },
    15 * 60_000,
  );
});

// `blockx functions deploy|list|use` through the built CLI (bin/blockx.js → dist/) against a real etcd,
// and `blockx up` on that etcd with `functions.source: cluster` (docs/functions-deploy.md): the version
// printed is the local code view's epoch id of the same folder; list/use/errors and their exit codes;
// `blockx status` and `blockx functions list` show which version the worker runs.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionCodeView } from '../../src/executor/code-epochs.js';
import { MAX_BUNDLE_FILE_BYTES } from '../../src/services/functions-store/bundle-limits.js';
import { parseAnyFunctionFileName } from '../../src/executor/core/functions-inventory.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/ports.js';
import { captureOutput, stopGroup, spawnTracked, waitForLine } from '../support/processes.js';
import { BIN, REPO, cleanEnv, runBlockx } from '../support/cli.js';

const blockx = (args: string[], env: NodeJS.ProcessEnv = {}) => runBlockx(args, { env: cleanEnv(env) });

function writeFolder(root: string, name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, source] of Object.entries(files)) writeFileSync(path.join(dir, file), source);
  return dir;
}

describe('blockx functions against a real etcd', () => {
  let etcd: EtcdServer | undefined;
  let root = '';
  let env: NodeJS.ProcessEnv = {};
  let one = '';
  let two = '';

  beforeAll(async () => {
    etcd = await startEtcd();
    root = mkdtempSync(path.join(tmpdir(), 'blockx-functions-cli-'));
    env = { ETCD_ENDPOINTS: etcd.endpoint };
    one = writeFolder(root, 'one', {
      'greet.ts': 'export default async (_ctx: unknown, who: string) => `hello, ${who}`;\n',
      'twice.py': 'async def main(ctx, x):\n    return 2 * x\n',
      'README.md': 'not a function: not bundled\n',
    });
    two = writeFolder(root, 'two', { 'greet.ts': "export default async () => 'hi';\n" });
  });

  afterAll(async () => {
    await etcd?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('list before any deploy says nothing is deployed', async () => {
    const r = await blockx(['functions', 'list'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/no functions version deployed/);
  });

  it('deploy prints the version a local code view computes for the same folder; again is a no-op', async () => {
    const view = new FunctionCodeView({ dir: one, parseFileName: parseAnyFunctionFileName });
    const local = await view.currentEpoch();
    const r = await blockx(['functions', 'deploy', one, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      version: local,
      files: ['greet.ts', 'twice.py'],
      changed: true,
      previous: '',
    });
    const again = await blockx(['functions', 'deploy', one], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `${local} is already the current version (2 file(s), ${out['sourceBytes']} bytes, ${out['storedBytes']} stored); nothing changed\n`,
    );
  });

  it('deploy of another folder, list, and use by prefix roll forward and back', async () => {
    const first = JSON.parse((await blockx(['functions', 'list', '--json'], env)).stdout) as {
      current: string;
    };
    const d = await blockx(['functions', 'deploy', two], env);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toMatch(
      new RegExp(
        `^deployed [0-9a-f]{16} from ${two} \\(1 file\\(s\\), \\d+ bytes, \\d+ stored\\); now current \\(was ${first.current}\\)\n`,
      ),
    );
    const second = /^deployed ([0-9a-f]{16})/.exec(d.stdout)?.[1] ?? '';

    const list = await blockx(['functions', 'list'], env);
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^VERSION +FILES +BYTES +STORED +DEPLOYED +CURRENT +WORKERS$/);
    expect(rows[1]).toMatch(new RegExp(`^${second} +1 +\\d+ +\\d+ +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z +yes +0$`));
    expect(rows[2]).toMatch(new RegExp(`^${first.current} +2 +`));

    const back = await blockx(['functions', 'use', first.current.slice(0, 5)], env);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toBe(
      `now current: ${first.current} (was ${second}); new tasks switch to it, running tasks keep theirs\n`,
    );
    const same = await blockx(['functions', 'use', first.current, '--json'], env);
    expect(JSON.parse(same.stdout)).toMatchObject({ version: first.current, changed: false });
  });

  it.each([
    [
      'an unknown version',
      ['use', 'ffffffff'],
      /VERSION_UNKNOWN: no kept version starts with ffffffff: the store keeps the last 10/,
    ],
    [
      'too short a prefix',
      ['use', 'ab'],
      /VERSION_UNKNOWN: "ab" is not a version: give at least 4 hex digits/,
    ],
  ])('use of %s is exit 1 with the reason', async (_what, args, message) => {
    const r = await blockx(['functions', ...args], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
  });

  it('a folder without functions, or with a file above the limit, is refused (exit 1) with the limit', async () => {
    const empty = writeFolder(root, 'empty', { 'notes.txt': 'x' });
    const r = await blockx(['functions', 'deploy', empty], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/BUNDLE_EMPTY: no function files to deploy/);
    const big = writeFolder(root, 'big', { 'huge.js': `// ${'x'.repeat(MAX_BUNDLE_FILE_BYTES)}\n` });
    const b = await blockx(['functions', 'deploy', big], env);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(
      new RegExp(
        `BUNDLE_TOO_LARGE: .*huge\\.js is \\d+ bytes; one function file may be at most ${MAX_BUNDLE_FILE_BYTES} bytes`,
      ),
    );
    const missing = await blockx(['functions', 'deploy', path.join(root, 'nope')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/FOLDER_UNREADABLE: cannot read the functions folder/);
  });

  it('deploy warns about each import the bundle does not carry, and still deploys', async () => {
    const helpers = writeFolder(root, 'helpers', {
      'uses.ts':
        "import { twice } from './lib/twice.js';\nexport default (_c: unknown, x: number) => twice(x);\n",
      'uses_py.py': 'from .util import f\n\ndef main(ctx):\n    return f()\n',
    });
    const r = await blockx(['functions', 'deploy', helpers, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning:'));
    expect(warnings).toEqual([
      expect.stringContaining('uses.ts imports ./lib/twice.js, which the bundle does not carry'),
      expect.stringContaining('uses_py.py imports .util, which the bundle does not carry'),
    ]);
    const out = JSON.parse(r.stdout) as { localImports: unknown };
    expect(out.localImports).toEqual([
      { fileName: 'uses.ts', specifier: './lib/twice.js' },
      { fileName: 'uses_py.py', specifier: '.util' },
    ]);
  });

  it('an etcd or a coordinator that does not answer is exit 2 naming it', async () => {
    const port = await freePort();
    const down = await blockx(['functions', 'list', '--etcd', `127.0.0.1:${port}`]);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(
      new RegExp(`^blockx functions list: cannot use etcd at 127\\.0\\.0\\.1:${port}: `),
    );
    // No etcd configured: the command talks to the coordinator of `blockx up`, here nobody.
    const none = await blockx(['functions', 'list', '--coordinator', `127.0.0.1:${port}`]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      new RegExp(
        `^blockx functions list: cannot use the coordinator at 127\\.0\\.0\\.1:${port}: .*pass --etcd for an etcd cluster`,
      ),
    );
  });

  it('a `blockx worker` with functions.source: cluster and no etcd stops before it serves (exit 2, one line)', async () => {
    const r = await blockx(['worker', '--deployment', 'block'], {
      BLOCKX_FUNCTIONS_SOURCE: 'cluster',
      BLOCKX_STORAGE_URL: 'sqlite::memory:',
      WORKER_LISTEN: '127.0.0.1:0',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^blockx: functions\.source: cluster needs registry\.etcd\.endpoints \(ETCD_ENDPOINTS\)/m,
    );
    expect(r.stdout).not.toMatch(/worker listening/);
  });

  describe('blockx up on this etcd with functions.source: cluster', () => {
    let up: ChildProcess | undefined;
    let coordinator = '';

    beforeAll(async () => {
      const emptyDir = writeFolder(root, 'up-functions', {});
      up = spawnTracked(
        process.execPath,
        [BIN, 'up', '--no-demo', '--no-dashboard', '--workers', '1', '--listen', '127.0.0.1:0'],
        {
          cwd: REPO,
          env: {
            ...cleanEnv(),
            ...env,
            BLOCKX_STORAGE_URL: 'sqlite::memory:',
            BLOCKX_FUNCTIONS_SOURCE: 'cluster',
            BLOCKX_FUNCTIONS_DIR: emptyDir,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const out = captureOutput(up);
      await waitForLine(up, /^serving/, 40_000);
      coordinator = /^coordinator listening on (\S+)/m.exec(out.text())?.[1] ?? '';
      expect(coordinator).not.toBe('');
    });

    afterAll(async () => {
      if (up) await stopGroup(up, 'SIGTERM', 10_000);
    });

    it('`blockx status` and `blockx functions list` show the version the worker runs; a deploy switches it', async () => {
      const current = (
        JSON.parse((await blockx(['functions', 'list', '--json'], env)).stdout) as { current: string }
      ).current;
      const codeOf = async (): Promise<string> => {
        const r = await blockx(['status', '--coordinator', coordinator, '--json']);
        const view = JSON.parse(r.stdout) as { workers: { codeVersion?: string }[] };
        return view.workers[0]?.codeVersion ?? '';
      };
      await eventually(async () => (await codeOf()) === current, { timeoutMs: 15_000, intervalMs: 200 });
      const table = await blockx(['status', '--coordinator', coordinator]);
      expect(table.stdout).toMatch(/ CODE +ROUTABLE\n/);
      expect(table.stdout).toContain(` ${current} `);

      const d = await blockx(['functions', 'deploy', two, '--json'], env);
      const next = (JSON.parse(d.stdout) as { version: string }).version;
      await eventually(async () => (await codeOf()) === next, { timeoutMs: 15_000, intervalMs: 200 });
      const list = await blockx(['functions', 'list'], env);
      expect(list.stdout).toMatch(new RegExp(`^${next} +\\d+ +\\d+ +\\d+ +\\S+ +yes +1$`, 'm'));
      expect(list.stdout).toMatch(
        new RegExp(
          `^WORKER +VERSION +SOURCE +STATUS\\n127\\.0\\.0\\.1:\\d+ +${next} +deployed +current$`,
          'm',
        ),
      );
    });
  });

  // The Worker runs in the up process with a memory database, in a child process of it with a file: then
  // its code view reads the Coordinator's store over their IPC channel (docs/architecture.md § blockx up).
  describe.each([
    ['in the up process', (): string => 'sqlite::memory:'],
    ['in a child process', (): string => `sqlite:${path.join(root, 'up-child.db')}`],
  ])(
    'blockx up without etcd (in-process registry) with functions.source: cluster, the Worker %s',
    (where, storageUrl) => {
      let up: ChildProcess | undefined;
      let coordinator = '';
      const noEtcd = (): NodeJS.ProcessEnv => ({ COORDINATOR_LISTEN: coordinator });

      beforeAll(async () => {
        const emptyDir = writeFolder(root, `inproc-functions-${where.replaceAll(' ', '-')}`, {});
        up = spawnTracked(
          process.execPath,
          [BIN, 'up', '--no-demo', '--no-dashboard', '--workers', '1', '--listen', '127.0.0.1:0'],
          {
            cwd: REPO,
            env: {
              ...cleanEnv(),
              BLOCKX_STORAGE_URL: storageUrl(),
              BLOCKX_FUNCTIONS_SOURCE: 'cluster',
              BLOCKX_FUNCTIONS_DIR: emptyDir,
              // A busy test machine must not make the Coordinator filter its one Worker as overloaded.
              COORDINATOR_CPU_RED_LINE: '1',
              COORDINATOR_MEMORY_RED_LINE: '1',
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        const out = captureOutput(up);
        await waitForLine(up, /^serving/, 40_000);
        coordinator = /^coordinator listening on (\S+) \(in-process registry\)/m.exec(out.text())?.[1] ?? '';
        expect(coordinator).not.toBe('');
      });

      afterAll(async () => {
        if (up) await stopGroup(up, 'SIGTERM', 10_000);
      });

      it('deploy, list and use go through the coordinator; the worker switches', async () => {
        const codeOf = async (): Promise<string> => {
          const r = await blockx(['status', '--json'], noEtcd());
          return (
            (JSON.parse(r.stdout) as { workers: { codeVersion?: string }[] }).workers[0]?.codeVersion ?? ''
          );
        };
        const first = await blockx(['functions', 'deploy', one, '--json'], noEtcd());
        expect(first.code, first.stderr).toBe(0);
        const v1 = (JSON.parse(first.stdout) as { version: string }).version;
        await eventually(async () => (await codeOf()) === v1, { timeoutMs: 15_000, intervalMs: 200 });
        const second = await blockx(['functions', 'deploy', two, '--json'], noEtcd());
        expect(JSON.parse(second.stdout)).toMatchObject({ previous: v1, changed: true });
        const v2 = (JSON.parse(second.stdout) as { version: string }).version;
        await eventually(async () => (await codeOf()) === v2, { timeoutMs: 15_000, intervalMs: 200 });

        const list = await blockx(['functions', 'list'], noEtcd());
        expect(list.code, list.stderr).toBe(0);
        expect(list.stdout).toMatch(new RegExp(`^${v2} +1 +\\d+ +\\d+ +\\S+ +yes +1$`, 'm'));
        expect(list.stdout).toMatch(new RegExp(`^127\\.0\\.0\\.1:\\d+ +${v2} +deployed +current$`, 'm'));

        const back = await blockx(['functions', 'use', v1.slice(0, 6)], noEtcd());
        expect(back.code, back.stderr).toBe(0);
        await eventually(async () => (await codeOf()) === v1, { timeoutMs: 15_000, intervalMs: 200 });
        const unknown = await blockx(['functions', 'use', 'ffffffff'], noEtcd());
        expect(unknown.code).toBe(1);
        expect(unknown.stderr).toMatch(
          /^blockx functions use: VERSION_UNKNOWN: no kept version starts with ffffffff/,
        );
      });

      it('validate and submit check a task against the deployed version, and agree on an id-less task (issue 33, item 4)', async () => {
        // The submitter's functions folder is empty: only the deployed version (one: greet, twice) has them.
        const empty = writeFolder(root, 'submitter-functions', {});
        const submitter = { ...noEtcd(), BLOCKX_FUNCTIONS_SOURCE: 'cluster', BLOCKX_FUNCTIONS_DIR: empty };
        const deployed = await blockx(['functions', 'deploy', one, '--json'], noEtcd());
        const version = (JSON.parse(deployed.stdout) as { version: string }).version;
        const task = (fn: string): string => {
          const file = path.join(root, `${fn}-task.json`);
          writeFileSync(
            file,
            JSON.stringify({
              functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList: [['x']] } },
              resultHandler: { type: 'ReturnValueResultHandler', config: {} },
            }),
          );
          return file;
        };
        const greet = task('greet');
        const valid = await blockx(['validate', greet], submitter);
        expect(valid.code, valid.stdout).toBe(0);
        const ran = await blockx(['submit', greet, '--json'], submitter);
        expect(ran.code, ran.stderr).toBe(0);
        expect(JSON.parse(ran.stdout)).toMatchObject({ state: 'SUCCEEDED' });

        const missing = task('greeet');
        const refused = await blockx(['submit', missing], submitter);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain(
          `/functionCallConfig/config/function: function "greeet" is not in the deployed version ${version} (did you mean "greet"?; available: greet, twice) (rule: functions.source)`,
        );
        const invalid = await blockx(['validate', missing], submitter);
        expect(invalid.code).toBe(1);
        expect(invalid.stdout).toContain(`function "greeet" is not in the deployed version ${version}`);
      });
    },
  );
});

// One service lifecycle (docs/architecture.md § Code layout): a plugin's serviceAssembled and shutdown
// hooks fire under `blockx worker` and `blockx coordinator` as under `blockx up`. The fixture plugin
// (test/fixtures/plugins/lifecycle/hook-probe) appends each call to BLOCKX_HOOK_PROBE_FILE.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { eventually } from '../support/eventually.js';
import { captureOutput, spawnTracked, stopGroup, waitForExit, waitForLine } from '../support/processes.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-lifecycle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The repository config with the probe plugin added to the built-in plugin dirs. */
function writeConfig(): string {
  const doc = parse(readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8')) as Record<string, unknown>;
  doc.plugins = {
    dirs: [
      path.join(REPO, 'plugins/builders'),
      path.join(REPO, 'plugins/writers'),
      path.join(REPO, 'test/fixtures/plugins/lifecycle'),
    ],
    packages: [],
  };
  const file = path.join(dir, 'blockx.config.yaml');
  writeFileSync(file, stringify(doc));
  return file;
}
const CONFIG = writeConfig();

function env(probe: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const e = { ...process.env };
  for (const k of Object.keys(e)) if (/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_)/.test(k)) delete e[k];
  return {
    ...e,
    BLOCKX_HOOK_PROBE_FILE: probe,
    BLOCKX_FUNCTIONS_DIR: path.join(REPO, 'functions'),
    BLOCKX_STORAGE_URL: 'sqlite::memory:',
    BLOCKX_LOG_LEVEL: 'info',
    ...extra,
  };
}

// The probe appends a line with appendFileSync, which creates the file before it writes: a read in
// between sees an empty file, which is no line yet (a CI run read [''] there).
const probeLines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];

async function runUntilSigterm(
  name: string,
  args: readonly string[],
  ready: RegExp,
  extra: Record<string, string>,
): Promise<{ before: string[]; after: string[]; code: number | null; output: string }> {
  const probe = path.join(dir, `${name}.hooks`);
  const child = spawnTracked(process.execPath, [BIN, ...args, '--config', CONFIG], {
    cwd: dir,
    env: env(probe, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  try {
    await waitForLine(child, ready, 30_000);
    const before = await eventually(
      () => {
        const lines = probeLines(probe);
        return lines.length > 0 ? lines : false;
      },
      { message: `${name}: serviceAssembled recorded`, timeoutMs: 10_000 },
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${output.text()}`);
    });
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    await waitForExit(child);
    await closed; // every output line read
    return {
      before,
      after: probeLines(probe),
      code: child.exitCode,
      output: `signal ${child.signalCode}\n${output.text()}`,
    };
  } finally {
    await stopGroup(child, 'SIGKILL', 1_000);
  }
}

describe('plugin lifecycle hooks fire in every service process', () => {
  it('blockx worker: serviceAssembled once it serves, shutdown after SIGTERM', async () => {
    const r = await runUntilSigterm(
      'worker',
      ['worker', '--deployment', 'block'],
      /^worker listening on \S+/,
      {
        WORKER_LISTEN: '127.0.0.1:0',
      },
    );
    expect(r.before).toEqual(['serviceAssembled worker block storage,worker,executor']);
    expect(r.code, r.output).toBe(0);
    expect(r.after, r.output).toEqual([...r.before, 'shutdown SIGTERM']);
  });

  it('blockx coordinator: serviceAssembled once it listens, shutdown after SIGTERM', async () => {
    const r = await runUntilSigterm(
      'coordinator',
      ['coordinator', '--deployment', 'block'],
      /coordinator listening/,
      // etcd is not needed: the coordinator serves (not ready) while its registry is unreachable.
      { ETCD_ENDPOINTS: 'http://127.0.0.1:1', COORDINATOR_LISTEN: '127.0.0.1:0' },
    );
    expect(r.before).toEqual(['serviceAssembled coordinator block registry,coordinator']);
    expect(r.code, r.output).toBe(0);
    expect(r.after, r.output).toEqual([...r.before, 'shutdown SIGTERM']);
  });
});

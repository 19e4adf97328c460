// `blockx functions deploy|use` with two real Workers on `functions.source: cluster` (docs/functions-deploy.md):
// a real etcd, `blockx coordinator`, two `blockx worker` processes (each with its Executor) on one
// PostgreSQL database. The Workers' own functions.dir is an empty folder, so every function they run came
// from the cluster. Covered:
//   - both Workers pick up a deployed version within PICKUP_BOUND_MS (heartbeat codeVersion, as
//     `blockx status` shows it), and run it;
//   - a task that pinned the old version before a deploy finishes on the old version, and its result
//     names the old code version; the next task runs the new one;
//   - `blockx functions use` rolls the cluster back;
//   - a bundle tampered with in etcd is refused: the Workers keep the previous version, say why in their
//     heartbeat, and a redeploy of the same folder repairs it.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import type { TaskRunResult } from '../../src/client/types.js';
import { createEtcdClient } from '../../src/services/registry/etcd-client.js';
import { BUNDLE_FORMAT } from '../../src/services/functions-store/bundle.js';
import { EtcdFunctionsKv } from '../../src/services/functions-store/etcd-kv.js';
import { readFunctionsFolder } from '../../src/services/functions-store/folder.js';
import { FunctionsStore } from '../../src/services/functions-store/functions-store.js';
import type { FunctionsKv } from '../../src/services/functions-store/kv-port.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

/**
 * The stated pickup bound on a loaded 2-core box: a Worker polls every FUNCTIONS_POLL_MS (1 s) and then
 * fetches one bundle, so it normally switches within ~1.1 s; the heartbeat that reports it follows within
 * 100 ms. The bound leaves room for a busy machine (measured figures are printed).
 */
const PICKUP_BOUND_MS = 10_000;

interface Deployed {
  version: string;
  changed: boolean;
}

/** A functions folder whose `probe` and `gated` answer `mark`. */
function writeVersion(root: string, mark: string): string {
  const dir = path.join(root, mark);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'probe.ts'),
    `export default async function probe(): Promise<string> {\n  return '${mark}';\n}\n`,
  );
  // Python functions travel in the same bundle (the Python executor gets them through DefineEpoch).
  writeFileSync(path.join(dir, 'probe_py.py'), `async def main(ctx):\n    return '${mark}-py'\n`);
  // Holds its call until `gate` exists (no timing in the test: it releases the task when it wants).
  writeFileSync(
    path.join(dir, 'gated.ts'),
    [
      "import { existsSync } from 'node:fs';",
      'export default async function gated(_ctx: unknown, gate: string): Promise<string> {',
      '  for (let i = 0; i < 1200 && !existsSync(gate); i++) await new Promise((r) => setTimeout(r, 50));',
      `  return '${mark}';`,
      '}',
      '',
    ].join('\n'),
  );
  return dir;
}

/** The call budget of this file's workers: longer than the gated call's wait (see beforeAll). */
const GATED_CALL_BUDGET_MS = 60_000;

const task = (fn: string, args: unknown[] = []) => ({
  functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList: [args] } },
  resultHandler: { type: 'ReturnValueResultHandler', config: {} },
  taskTimeoutMs: 90_000,
});

const output = (r: TaskRunResult): unknown => (r.pluginResults[0]?.result as unknown[] | undefined)?.[0];

describe('functions deploy / use: two workers on etcd + PostgreSQL', () => {
  let db: PgServer | undefined;
  let cluster: TestCluster | undefined;
  let client: BlockxClient | undefined;
  let root = '';
  const versions: Record<string, string> = {};
  const c = (): TestCluster => {
    if (cluster === undefined) throw new Error('the cluster did not start');
    return cluster;
  };

  const deploy = async (dir: string): Promise<Deployed> => {
    const r = await c().cli(['functions', 'deploy', dir, '--json']);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as Deployed;
  };

  /** Waits until every worker's heartbeat reports `version`; returns the wait in ms. */
  const allOn = async (version: string, check?: (error: string) => boolean): Promise<number> => {
    const started = Date.now();
    await eventually(
      async () => {
        const view = await c().status();
        return (
          view.workers.length === 2 &&
          view.workers.every((w) => w.codeVersion === version && (check?.(w.codeVersionError ?? '') ?? true))
        );
      },
      { timeoutMs: PICKUP_BOUND_MS, intervalMs: 50, message: `both workers on ${version}` },
    );
    return Date.now() - started;
  };

  const run = (t: ReturnType<typeof task>): Promise<TaskRunResult> => {
    if (client === undefined) throw new Error('no client');
    return client.run(t);
  };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'blockx-deploy-e2e-'));
    const empty = path.join(root, 'worker-functions');
    mkdirSync(empty);
    db = await startPostgres();
    const url = await db.createDatabase('functions_deploy_e2e');
    cluster = await startCluster({
      workers: 2,
      storageUrl: url,
      functionsDir: empty,
      // The gated call waits through a deploy, both workers' pickup and a probe task: on a busy box that
      // outlasted the default 5 s call budget (worker.callDeadlineMs) and failed the case (a timing knob).
      env: { BLOCKX_FUNCTIONS_SOURCE: 'cluster', CALL_DEADLINE_MS: String(GATED_CALL_BUDGET_MS) },
    });
    client = new BlockxClient({ coordinator: cluster.coordinatorAddr });
  });

  afterAll(async () => {
    client?.close();
    await cluster?.stop();
    await db?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('before any deploy, a worker has no code to run and says so', async () => {
    const view = await c().status();
    expect(view.workers).toHaveLength(2);
    for (const w of view.workers) {
      expect(w.codeVersion).toBe('');
      expect(w.codeVersionError).toMatch(/no functions version has been deployed/);
    }
    const r = await run(task('probe'));
    expect(r.state).toBe('FAILED');
    expect(r.failureCode).toBe('ACTIVATION_FAILED');
    expect(r.failureMessage).toMatch(/functions\.source is cluster/);
  });

  it('both workers pick up a deployed version within the bound and run it', async () => {
    const d = await deploy(writeVersion(root, 'v1'));
    expect(d.version).toMatch(/^[0-9a-f]{16}$/);
    versions['v1'] = d.version;
    const waited = await allOn(d.version, (e) => e === '');
    console.log(`pickup of ${d.version} by both workers: ${waited} ms (bound ${PICKUP_BOUND_MS} ms)`);
    const results = await Promise.all([run(task('probe')), run(task('probe')), run(task('probe'))]);
    for (const r of results) {
      expect(r.state, r.failureMessage).toBe('SUCCEEDED');
      expect(output(r)).toBe('v1');
      expect(r.codeVersion).toBe(d.version);
    }
    const py = await run(task('probe_py'));
    expect(py.state, py.failureMessage).toBe('SUCCEEDED');
    expect(output(py)).toBe('v1-py');
    expect(py.codeVersion).toBe(d.version);
  });

  it('a task started before a deploy finishes on the old version; the next one runs the new', async () => {
    const gate = path.join(root, 'gate-1');
    const old = run(task('gated', [gate]));
    // The task has pinned v1 once a worker counts it running (activation pins before the Builder runs).
    await eventually(async () => (await c().status()).workers.some((w) => w.runningTasks > 0), {
      timeoutMs: 15_000,
      intervalMs: 50,
      message: 'the gated task running',
    });
    const d = await deploy(writeVersion(root, 'v2'));
    versions['v2'] = d.version;
    const waited = await allOn(d.version);
    console.log(`pickup of ${d.version} with a task running on the old version: ${waited} ms`);
    const fresh = await run(task('probe'));
    expect(output(fresh)).toBe('v2');
    expect(fresh.codeVersion).toBe(d.version);

    writeFileSync(gate, '');
    const finished = await old;
    expect(finished.state, finished.failureMessage).toBe('SUCCEEDED');
    expect(output(finished)).toBe('v1');
    expect(finished.codeVersion).toBe(versions['v1']);
  });

  it('`blockx functions use` rolls back to a kept version by a unique prefix', async () => {
    const v1 = versions['v1'] ?? '';
    const r = await c().cli(['functions', 'use', v1.slice(0, 6)]);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`now current: ${v1}`);
    await allOn(v1);
    const back = await run(task('probe'));
    expect(output(back)).toBe('v1');
    expect(back.codeVersion).toBe(v1);

    const list = await c().cli(['functions', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout) as {
      current: string;
      versions: { version: string }[];
      workers: { workerAddr: string; codeVersion: string }[];
    };
    expect(listed.current).toBe(v1);
    expect(listed.versions.map((v) => v.version)).toEqual([v1, versions['v2']]);
    expect(listed.workers.map((w) => w.codeVersion)).toEqual([v1, v1]);
  });

  it('a tampered bundle is refused: workers keep the old version and say why; a redeploy repairs it', async () => {
    const v1 = versions['v1'] ?? '';
    const etcd = createEtcdClient({ endpoints: [c().etcd.endpoint] });
    try {
      // Deploy v3 through a backend that swaps the stored bundle for other code under the same version:
      // the index and the current pointer are right, the bundle is not (what an attacker with etcd
      // write access, or a damaged value, would leave).
      const kv = new EtcdFunctionsKv(etcd);
      const evil: FunctionsKv = {
        get: (k) => kv.get(k),
        put: (k, v) => kv.put(k, v),
        commit: (t) => kv.commit(t),
        putIfAbsent: (k, _v) => {
          const version = k.split('/').at(-1) ?? '';
          const forged = {
            format: BUNDLE_FORMAT,
            version,
            digest: '0'.repeat(64),
            deployedAtMs: Date.now(),
            files: [
              { fileName: 'probe.ts', source: "export default async function probe() { return 'evil'; }\n" },
            ],
          };
          return kv.putIfAbsent(k, gzipSync(Buffer.from(JSON.stringify(forged))));
        },
      };
      const v3dir = writeVersion(root, 'v3');
      const out = await new FunctionsStore(evil).deploy(await readFunctionsFolder(v3dir));
      const v3 = out.entry.version;
      await allOn(v1, (e) => e.startsWith(`refused version ${v3} (still serving ${v1}): its files hash to`));
      const still = await run(task('probe'));
      expect(output(still)).toBe('v1');
      expect(still.codeVersion).toBe(v1);
      const status = await c().cli(['status']);
      expect(status.stdout).toContain(`refused version ${v3}`);

      // Redeploying the same folder overwrites the damaged bundle; the workers retry with backoff.
      const again = await deploy(v3dir);
      expect(again.version).toBe(v3);
      await eventually(
        async () => (await c().status()).workers.every((w) => w.codeVersion === v3 && !w.codeVersionError),
        { timeoutMs: 45_000, intervalMs: 100, message: 'both workers on the repaired version' },
      );
      const repaired = await run(task('probe'));
      expect(output(repaired)).toBe('v3');
    } finally {
      etcd.close();
    }
    expect(existsSync(root)).toBe(true);
  });
});

// Tenants on a real cluster (docs/security.md § Task isolation, issue 32 item 5): with mutual TLS, alice
// and bob submit tasks at the same time to one Worker whose Executors have one execution thread (JS) and
// one execution process (Python). Every call says where and when it ran; no call of one submitter ran on
// that thread or process while a call of the other did, while calls of one submitter did run there at
// once (so the thread was shared in time, and the rule kept the two apart). Python, under the default
// isolation task, also never runs the two on one process in its life.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyAndCert } from '../../src/cli/certs/dev-ca.js';
import { BlockxClient } from '../../src/client/client.js';
import type { TlsPem } from '../../src/kernel/tls-files.js';
import { overlaps, submittersPerPlace, type CallSpan } from '../support/call-spans.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { loopbackTls } from '../support/certs.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-tenants-'));
const functionsDir = path.join(dir, 'functions');
const tls = loopbackTls(dir);
const pem = (kc: KeyAndCert): TlsPem => ({ ca: tls.ca.cert, cert: kc.cert, key: kc.key });
const submitters = { alice: tls.issue('alice'), bob: tls.issue('bob') };

// Both clocks are the host's CLOCK_MONOTONIC (process.hrtime, time.monotonic), in ms.
const JS_SPAN =
  "import { threadId } from 'node:worker_threads';\n" +
  'const now = (): number => Number(process.hrtime.bigint()) / 1e6;\n' +
  'export default async function span(_ctx: unknown, ms: number) {\n' +
  '  const start = now();\n' +
  '  await new Promise((resolve) => setTimeout(resolve, ms));\n' +
  '  return { where: `${process.pid}/${threadId}`, start, end: now() };\n' +
  '}\n';
const PY_SPAN =
  'import asyncio\nimport os\nimport time\n\n\nasync def main(ctx, ms):\n' +
  '    start = time.monotonic() * 1000\n    await asyncio.sleep(ms / 1000)\n' +
  '    return {"where": os.readlink("/proc/self"), "start": start, "end": time.monotonic() * 1000}\n';

const TASKS = 3;
const CALLS = 4;
const SLEEP_MS = 120;

describe('tenants on a one-thread executor', () => {
  let cluster: TestCluster;
  const clients = new Map<string, BlockxClient>();

  beforeAll(async () => {
    mkdirSync(functionsDir);
    writeFileSync(path.join(functionsDir, 'span.ts'), JS_SPAN);
    writeFileSync(path.join(functionsDir, 'span_py.py'), PY_SPAN);
    cluster = await startCluster({
      workers: 1,
      taskSlots: 2 * TASKS,
      functionsDir,
      env: { BLOCKX_TLS_CA: tls.files.ca, BLOCKX_TLS_CERT: tls.files.cert, BLOCKX_TLS_KEY: tls.files.key },
      clientTls: pem(tls.node),
      configPatch: (doc) => {
        const deployments = doc['deployments'] as Record<string, { executor?: Record<string, unknown> }>;
        for (const d of Object.values(deployments)) d.executor = { ...d.executor, threads: 1 };
      },
    });
    for (const [name, kc] of Object.entries(submitters))
      clients.set(name, new BlockxClient({ coordinator: cluster.coordinatorAddr, tls: pem(kc) }));
  }, 120_000);

  afterAll(async () => {
    for (const c of clients.values()) c.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** TASKS tasks of each submitter, all at once, each CALLS calls of `fn` sleeping SLEEP_MS. */
  async function runAll(fn: string): Promise<CallSpan[]> {
    const runs = [...clients].flatMap(([who, client]) =>
      Array.from({ length: TASKS }, async () => {
        const r = await client.run({
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: { function: fn, callList: Array.from({ length: CALLS }, () => [SLEEP_MS]) },
          },
          resultHandler: { type: 'ReturnValueResultHandler', config: {} },
        });
        expect(r.state, r.failureMessage).toBe('SUCCEEDED');
        return (r.pluginResults[0]?.result as Omit<CallSpan, 'who'>[]).map((s) => ({ who, ...s }));
      }),
    );
    return (await Promise.all(runs)).flat();
  }

  it.each([
    { fn: 'span', label: 'JS thread' },
    { fn: 'span_py', label: 'Python process' },
  ])('$label: two submitters’ calls never run on it at once; one submitter’s do', async ({ fn }) => {
    const all = await runAll(fn);
    expect(all).toHaveLength(2 * TASKS * CALLS);
    const o = overlaps(all);
    expect(o.cross).toBe(0);
    expect(o.same).toBeGreaterThan(0);
    if (fn === 'span') expect(new Set(all.map((s) => s.where)).size).toBe(1);
    else for (const [pid, n] of submittersPerPlace(all)) expect(n, `process ${pid}`).toBe(1);
  });
});

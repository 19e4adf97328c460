// Signed deploys on a real cluster (docs/functions-deploy.md § Signed deploys): etcd, a Coordinator and a
// Worker with mutual TLS and `functions.source: cluster`. `blockx functions deploy` signs the bundle with
// the deployer's certificate (tls.cert / tls.key); the Worker runs only bundles signed by a deployer or
// admin certificate of the cluster CA. A submitter's deploy, and a bundle written straight into etcd by
// a process holding only etcd access, are refused: the Worker keeps serving its version and says why.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { EtcdFunctionsKv } from '../../src/services/functions-store/etcd-kv.js';
import { FunctionsStore } from '../../src/services/functions-store/functions-store.js';
import { createEtcdClient } from '../../src/services/registry/etcd-client.js';
import { loopbackTls } from '../support/certs.js';
import { runBlockx } from '../support/cli.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const root = mkdtempSync(path.join(tmpdir(), 'blockx-signed-'));
const tls = loopbackTls(root);
const dora = tls.issue('dora', [], ['deployer']).files;
const mallory = tls.issue('mallory').files; // --client: a submitter

function writeVersion(mark: string): string {
  const dir = path.join(root, mark);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'probe.ts'),
    `export default async function probe() {\n  return '${mark}';\n}\n`,
  );
  return dir;
}

describe('signed deploys: only a deployer of the cluster CA changes the code workers run', () => {
  let cluster: TestCluster;
  let client: BlockxClient;
  let v1 = '';

  const deployAs = async (files: { cert: string; key: string }, dir: string) => {
    const r = await runBlockx(['functions', 'deploy', dir, '--json'], {
      env: {
        ...cluster.env,
        BLOCKX_TLS_CA: tls.files.ca,
        BLOCKX_TLS_CERT: files.cert,
        BLOCKX_TLS_KEY: files.key,
      },
    });
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
    return (JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { version: string }).version;
  };
  const worker = async () => (await cluster.status()).workers[0]!;
  const probe = async () => {
    const r = await client.run({
      functionCallConfig: { type: 'CallListCallConfig', config: { function: 'probe', callList: [[]] } },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    });
    expect(r.state, r.failureMessage).toBe('SUCCEEDED');
    return { value: (r.pluginResults[0]?.result as unknown[])[0], codeVersion: r.codeVersion };
  };

  beforeAll(async () => {
    const empty = path.join(root, 'worker-functions');
    mkdirSync(empty);
    cluster = await startCluster({
      workers: 1,
      functionsDir: empty,
      env: {
        BLOCKX_FUNCTIONS_SOURCE: 'cluster',
        BLOCKX_TLS_CA: tls.files.ca,
        BLOCKX_TLS_CERT: tls.files.cert,
        BLOCKX_TLS_KEY: tls.files.key,
      },
      clientTls: { ca: tls.ca.cert, cert: tls.node.cert, key: tls.node.key },
    });
    client = new BlockxClient({
      coordinator: cluster.coordinatorAddr,
      tls: { ca: tls.ca.cert, cert: tls.node.cert, key: tls.node.key },
    });
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("a deployer's signed bundle is taken and run", async () => {
    v1 = await deployAs(dora, writeVersion('v1'));
    await eventually(async () => (await worker()).codeVersion === v1, { timeoutMs: 15_000, intervalMs: 100 });
    expect((await worker()).codeVersionError ?? '').toBe('');
    expect(await probe()).toEqual({ value: 'v1', codeVersion: v1 });
  });

  it("a submitter's deploy is refused: the worker keeps v1 and says who signed", async () => {
    const v2 = await deployAs(mallory, writeVersion('v2'));
    await eventually(async () => /refused version/.test((await worker()).codeVersionError ?? ''), {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    const w = await worker();
    expect(w.codeVersion).toBe(v1);
    expect(w.codeVersionError).toMatch(new RegExp(`refused version ${v2} \\(still serving ${v1}\\)`));
    expect(w.codeVersionError).toMatch(/CN=mallory.*holds submitter, not deployer or admin/);
    expect(await probe()).toEqual({ value: 'v1', codeVersion: v1 });
  });

  it('a bundle written straight into etcd without a deployer key is refused', async () => {
    const etcd = createEtcdClient({ endpoints: [cluster.etcd.endpoint], unaryDeadlineMs: 5_000 });
    let v3 = '';
    try {
      v3 = (
        await new FunctionsStore(new EtcdFunctionsKv(etcd)).deploy([
          { fileName: 'probe.ts', source: "export default () => 'OWNED';\n" },
        ])
      ).entry.version;
    } finally {
      etcd.close();
    }
    await eventually(async () => ((await worker()).codeVersionError ?? '').includes(v3), {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    const w = await worker();
    expect(w.codeVersion).toBe(v1);
    expect(w.codeVersionError).toMatch(/it is not signed: this cluster has a CA/);
    expect(await probe()).toEqual({ value: 'v1', codeVersion: v1 });
  });
});

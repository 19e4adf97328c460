// Signed deploys (docs/functions-deploy.md § Signed deploys): who may sign a bundle a Worker of a cluster
// with a CA runs, on real certificates (src/cli/certs/dev-ca.ts) and Node's crypto; the signature
// travels in the stored bundle, a signed redeploy replaces a copy stored unsigned, and the Worker's code
// view refuses an untrusted bundle and keeps serving the version it has.
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createCa, issueCertificate, type KeyAndCert } from '../../../../src/cli/certs/dev-ca.js';
import { decodeBundle, encodeBundle } from '../../../../src/services/functions-store/bundle.js';
import {
  bundleSignatureProblem,
  signBundleDigest,
  trustedBundleCheck,
} from '../../../../src/services/functions-store/bundle-signature.js';
import { FunctionsStore } from '../../../../src/services/functions-store/functions-store.js';
import { MemoryFunctionsKv } from '../../../../src/services/functions-store/memory-kv.js';
import { versionKey } from '../../../../src/services/functions-store/store-keys.js';
import { ClusterCodeView } from '../../../../src/services/worker/adapters/code-view/cluster-code-view.js';

const NOW = Date.parse('2026-12-05T00:00:00Z');
const ca = createCa({ commonName: 'cluster CA', days: 10, now: new Date(NOW) });
const other = createCa({ commonName: 'someone else', days: 10, now: new Date(NOW) });
const person = (name: string, roles: string[] = [], from: KeyAndCert = ca, now = NOW): KeyAndCert =>
  issueCertificate(from, {
    commonName: name,
    hosts: [],
    usage: 'client',
    roles,
    days: 1,
    now: new Date(now),
  });
const signer = (kc: KeyAndCert) => ({ cert: kc.cert, key: kc.key });
const folder = (mark: string) => [{ fileName: 'probe.ts', source: `export default () => '${mark}';\n` }];
const DIGEST = 'ab'.repeat(32);

describe('who may sign a bundle', () => {
  const node = issueCertificate(ca, {
    commonName: 'node',
    hosts: ['127.0.0.1'],
    usage: 'service',
    days: 1,
    now: new Date(NOW),
  });
  const cases: [string, KeyAndCert | undefined, RegExp | undefined][] = [
    ['a deployer of the cluster CA', person('dora', ['deployer']), undefined],
    ['an admin', person('root', ['admin']), undefined],
    ['a service certificate without role names (admin, as before roles)', node, undefined],
    ['nobody (unsigned)', undefined, /it is not signed: this cluster has a CA/],
    [
      'a submitter (client certificate without role names)',
      person('mallory'),
      /holds submitter, not deployer or admin/,
    ],
    ['a viewer', person('vera', ['viewer']), /"CN=vera", which holds viewer, not deployer or admin/],
    [
      'a worker',
      issueCertificate(ca, {
        commonName: 'w',
        hosts: ['127.0.0.1'],
        usage: 'service',
        roles: ['worker'],
        days: 1,
        now: new Date(NOW),
      }),
      /holds worker/,
    ],
    ['a deployer of another CA', person('eve', ['deployer'], other), /which the cluster CA did not issue/],
    ['an expired deployer', person('old', ['deployer'], ca, NOW - 3 * 86_400_000), /is not valid now/],
  ];
  it.each(cases)('%s', (_name, kc, problem) => {
    const signature = kc === undefined ? undefined : signBundleDigest(DIGEST, signer(kc));
    const got = bundleSignatureProblem(DIGEST, signature, ca.cert, NOW);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(problem);
  });

  it('a signature over other files does not match', () => {
    const signature = signBundleDigest('cd'.repeat(32), signer(person('dora', ['deployer'])));
    expect(bundleSignatureProblem(DIGEST, signature, ca.cert, NOW)).toMatch(/does not match its files/);
  });

  it('a certificate that is not PEM is named as such', () => {
    expect(bundleSignatureProblem(DIGEST, { certificate: 'nope', value: 'AA==' }, ca.cert, NOW)).toMatch(
      /not a readable PEM certificate/,
    );
  });
});

describe('the signature in the stored bundle', () => {
  const dora = person('dora', ['deployer']);

  it('round-trips through encode and decode, and checks out', () => {
    const encoded = encodeBundle(folder('a'), NOW, { signer: signer(dora) });
    const decoded = decodeBundle(encoded.stored, { version: encoded.version });
    expect(decoded.signature).toEqual(encoded.signature);
    expect(() => trustedBundleCheck(ca.cert, () => NOW)(decoded)).not.toThrow();
  });

  it('a malformed or oversized signature field makes the bundle corrupt', () => {
    const encoded = encodeBundle(folder('a'), NOW);
    const record = JSON.parse(gunzipSync(encoded.stored).toString('utf8')) as Record<string, unknown>;
    for (const signature of [
      { certificate: 1, value: 'x' },
      'x',
      { certificate: 'x'.repeat(40_000), value: 'x' },
    ]) {
      const stored = gzipSync(JSON.stringify({ ...record, signature }));
      expect(() => decodeBundle(stored, { version: encoded.version })).toThrow(
        expect.objectContaining({ code: 'BUNDLE_CORRUPT' }),
      );
    }
  });

  it('a signed redeploy replaces a copy of the same files stored unsigned; an unsigned one does not', async () => {
    const store = new FunctionsStore(new MemoryFunctionsKv(), () => NOW);
    const first = await store.deploy(folder('a'));
    expect((await store.fetch(first.entry)).signature).toBeUndefined();
    const signed = await store.deploy(folder('a'), { signer: signer(dora) });
    expect(signed.newVersion).toBe(true);
    const kept = await store.fetch(signed.entry);
    expect(kept.signature?.certificate).toBe(dora.cert);
    const again = await store.deploy(folder('a'));
    expect(again.newVersion).toBe(false);
    expect((await store.fetch(again.entry)).signature).toEqual(kept.signature);
  });
});

describe("the Worker's code view with a cluster CA", () => {
  it('refuses an unsigned or submitter-signed bundle, keeps serving, and takes a deployer-signed one', async () => {
    const kv = new MemoryFunctionsKv();
    const store = new FunctionsStore(kv, () => NOW);
    let now = NOW;
    const view = new ClusterCodeView({
      source: store,
      functionsDir: '/f',
      clock: () => now,
      check: trustedBundleCheck(ca.cert, () => NOW),
    });
    const a = await store.deploy(folder('a'), { signer: signer(person('dora', ['deployer'])) });
    await view.poll();
    expect(view.status()).toEqual({ version: a.entry.version });
    // Written with the store's credentials alone (no deployer key), then by a submitter.
    const unsigned = await store.deploy(folder('b'));
    await view.poll();
    expect(view.status()).toEqual({
      version: a.entry.version,
      error: expect.stringMatching(
        new RegExp(
          `^refused version ${unsigned.entry.version} \\(still serving ${a.entry.version}\\): bundle .*: it is not signed`,
        ),
      ),
    });
    const forged = encodeBundle(folder('c'), NOW, { signer: signer(person('mallory')) });
    await kv.put(versionKey(forged.version), forged.stored);
    const c = await store.deploy(folder('c'), { signature: forged.signature! });
    // The store kept the submitter-signed copy it already had (same signature): still refused.
    now += 60_000; // past the retry backoff of the refused version
    await view.poll();
    expect(view.status().version).toBe(a.entry.version);
    expect(view.status().error).toMatch(/holds submitter, not deployer or admin/);
    const good = await store.deploy(folder('c'), { signer: signer(person('dora', ['deployer'])) });
    expect(good.entry.version).toBe(c.entry.version);
    now += 60_000;
    await view.poll();
    expect(view.status()).toEqual({ version: c.entry.version });
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { certificateCovers, createCa, issueCertificate } from '../../../src/cli/certs/dev-ca.js';
import { resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';
import { ConfigError, type ConfigIssue } from '../../../src/kernel/errors.js';
import {
  isLoopbackListen,
  loadTlsMaterial,
  plaintextListenProblem,
  serviceTls,
} from '../../../src/kernel/tls-files.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-tls-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MINIMAL = 'version: 1\ndeployments:\n  block:\n    kind: block\n';

function resolve(text: string, env: NodeJS.ProcessEnv = {}) {
  return resolveConfig(parseConfigText(text, path.join(dir, 'blockx.config.yaml')), { env });
}
function issuesOf(text: string, env: NodeJS.ProcessEnv = {}): ConfigIssue[] {
  try {
    resolve(text, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).issues];
  }
  throw new Error('expected the config to be rejected');
}

describe('isLoopbackListen', () => {
  it.each([
    ['127.0.0.1:9090', true],
    ['127.5.6.7:1', true],
    ['localhost:8080', true],
    ['LOCALHOST:8080', true],
    ['[::1]:9090', true],
    ['unix:/run/blockx.sock', true],
    [':9090', false],
    ['9090', false],
    ['0.0.0.0:9090', false],
    ['[::]:9090', false],
    ['10.0.0.7:9090', false],
    ['worker-a.internal:9090', false],
    ['128.0.0.1:9090', false],
  ])('%s → %s', (addr, loopback) => {
    expect(isLoopbackListen(addr)).toBe(loopback);
  });
});

describe('plaintextListenProblem', () => {
  it('refuses a non-loopback plaintext listener, naming the key, the address and the ways out', () => {
    const err = plaintextListenProblem('deployments.block.worker.listen', ':9090', false, false);
    expect(err?.code).toBe('CONFIG_INVALID');
    expect(err?.message).toMatch(/deployments\.block\.worker\.listen :9090 is reachable from other hosts/);
    expect(err?.message).toMatch(/tls\.ca, tls\.cert and tls\.key/);
    expect(err?.message).toMatch(/blockx certs/);
    expect(err?.message).toMatch(/tls\.allowPlaintext/);
  });

  it('property: only TLS, the explicit allowance or a loopback address lets it through', () => {
    const addr = fc.oneof(
      fc.constantFrom('127.0.0.1:1', ':9090', '0.0.0.0:80', '10.1.2.3:5', 'localhost:1', 'h.example:2'),
      fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 65535 })).map(([h, p]) => `${h}:${p}`),
    );
    fc.assert(
      fc.property(addr, fc.boolean(), fc.boolean(), (a, tlsOn, allow) => {
        const problem = plaintextListenProblem('x', a, tlsOn, allow);
        expect(problem === undefined).toBe(tlsOn || allow || isLoopbackListen(a));
      }),
    );
  });
});

describe('loadTlsMaterial', () => {
  const ca = createCa({ commonName: 'unit CA', days: 1 });
  const leaf = issueCertificate(ca, { commonName: 'n', hosts: ['127.0.0.1'], usage: 'service', days: 1 });
  const caFile = path.join(dir, 'ca.pem');
  const certFile = path.join(dir, 'n.pem');
  const keyFile = path.join(dir, 'n-key.pem');
  writeFileSync(caFile, ca.cert);
  writeFileSync(certFile, leaf.cert);
  writeFileSync(keyFile, leaf.key);

  it('is off when every path is empty, and reads the three files when set', () => {
    expect(loadTlsMaterial({ ca: '', cert: '', key: '' })).toBeUndefined();
    const m = loadTlsMaterial({ ca: caFile, cert: certFile, key: keyFile });
    expect(m?.ca.toString()).toBe(ca.cert);
    expect(m?.key.toString()).toBe(leaf.key);
  });

  it.each([
    [{ cert: '/no/such.pem' }, /tls\.cert: cannot read \/no\/such\.pem/],
    [{ ca: keyFile }, /tls\.ca: .* holds no PEM certificate/],
    [{ key: certFile }, /tls\.key: .* holds no PEM private key/],
    [{ key: '' }, /tls\.key: is required when TLS is on/],
  ])('%o → %s, never the file contents', (change, message) => {
    const files = { ca: caFile, cert: certFile, key: keyFile, ...change };
    let err: Error | undefined;
    try {
      loadTlsMaterial(files);
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).toMatch(message);
    expect(err?.message).not.toMatch(/BEGIN/);
  });

  it('serviceTls refuses a plaintext :9090 and accepts it with TLS on', () => {
    const off = { ca: '', cert: '', key: '', allowPlaintext: false };
    expect(() => serviceTls(off, 'w.listen', ':9090')).toThrow(/reachable from other hosts/);
    expect(serviceTls(off, 'w.listen', '127.0.0.1:0')).toBeUndefined();
    expect(serviceTls({ ...off, allowPlaintext: true }, 'w.listen', ':9090')).toBeUndefined();
    expect(
      serviceTls({ ca: caFile, cert: certFile, key: keyFile, allowPlaintext: false }, 'w', ':9090'),
    ).toBeDefined();
  });
});

describe('config: the tls key and etcd security', () => {
  it('defaults: TLS off, plaintext refused off loopback, services on loopback', () => {
    const c = resolve(MINIMAL);
    expect(c.tls).toEqual({ ca: '', cert: '', key: '', allowPlaintext: false });
    expect(c.deployments.block!.worker.listen).toBe('127.0.0.1:9090');
    expect(c.deployments.block!.coordinator.listen).toBe('127.0.0.1:8080');
    expect(c.registry.etcd).toMatchObject({ ca: '', cert: '', key: '', username: '', password: '' });
  });

  it('resolves the files against the config folder; env overrides the file', () => {
    const c = resolve(`${MINIMAL}tls:\n  ca: certs/ca.pem\n  cert: certs/n.pem\n  key: certs/n-key.pem\n`, {
      BLOCKX_TLS_CERT: '/elsewhere/w.pem',
      BLOCKX_TLS_ALLOW_PLAINTEXT: 'yes',
      ETCD_USERNAME: 'u',
      ETCD_PASSWORD: 'p',
    });
    expect(c.tls).toEqual({
      ca: path.join(dir, 'certs/ca.pem'),
      cert: '/elsewhere/w.pem',
      key: path.join(dir, 'certs/n-key.pem'),
      allowPlaintext: true,
    });
    expect(c.registry.etcd).toMatchObject({ username: 'u', password: 'p' });
  });

  it.each([
    [`tls:\n  ca: a.pem\n`, {}, ['tls.cert', 'tls.key']],
    [`tls:\n  cert: c.pem\n  key: k.pem\n`, {}, ['tls.ca']],
    ['', { BLOCKX_TLS_KEY: '/k.pem' }, ['tls.ca', 'tls.cert']],
    [`registry:\n  etcd:\n    cert: c.pem\n`, {}, ['registry.etcd.key', 'registry.etcd.ca']],
    [`registry:\n  etcd:\n    username: u\n`, {}, ['registry.etcd.password']],
    ['', { ETCD_PASSWORD: 'p' }, ['registry.etcd.username']],
  ])('%j %j → issues at %j', (extra, env, paths) => {
    const issues = issuesOf(MINIMAL + extra, env);
    expect(issues.map((i) => i.path).sort()).toEqual([...paths].sort());
  });

  it('a bad BLOCKX_TLS_ALLOW_PLAINTEXT names the variable', () => {
    const issues = issuesOf(MINIMAL, { BLOCKX_TLS_ALLOW_PLAINTEXT: 'maybe' });
    expect(issues[0]).toMatchObject({ variable: 'BLOCKX_TLS_ALLOW_PLAINTEXT' });
    expect(issues[0]?.message).toMatch(/expected true or false/);
  });

  it('an unknown key under tls is refused with its path', () => {
    const issues = issuesOf(`${MINIMAL}tls:\n  token: abc\n`);
    expect(issues.map((i) => i.path)).toContain('tls.token');
  });
});

describe('the development CA (blockx certs)', () => {
  const ca = createCa({ commonName: 'dev CA', days: 10 });
  const svc = issueCertificate(ca, {
    commonName: 'svc',
    hosts: ['127.0.0.1', 'localhost', 'w1.internal', '::1'],
    usage: 'service',
    days: 1,
  });
  const other = createCa({ commonName: 'other', days: 10 });

  it('issues certificates that name exactly their hosts and verify only against their CA', () => {
    for (const host of ['127.0.0.1', 'localhost', 'w1.internal', '::1'])
      expect(certificateCovers(svc.cert, ca.cert, host), host).toBe(true);
    for (const host of ['127.0.0.2', 'w2.internal', 'example.com'])
      expect(certificateCovers(svc.cert, ca.cert, host), host).toBe(false);
    expect(certificateCovers(svc.cert, other.cert, '127.0.0.1')).toBe(false);
  });

  it('a client certificate names no host', () => {
    const client = issueCertificate(ca, { commonName: 'c', hosts: [], usage: 'client', days: 1 });
    expect(certificateCovers(client.cert, ca.cert, '127.0.0.1')).toBe(false);
  });
});

// `blockx ingest`'s answers before any task runs, through the built CLI (`npm run build` first): an unreachable
// node is one line and exit 2 within a bound, a node on another chain than --chain-id is refused, bad flags
// are usage errors. The ingestion itself runs in test/e2e/ingest.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { cleanEnv } from '../support/cluster.js';
import { freePort } from '../support/ports.js';
import { spawnTracked } from '../support/processes.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');

function blockx(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawnTracked(process.execPath, [BIN, ...args], {
    cwd: REPO,
    env: { ...cleanEnv(), ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

describe('blockx ingest: refusals before any task', () => {
  let anvil: AnvilNode;
  beforeAll(async () => {
    anvil = await startAnvil();
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  it('an unreachable URL: one line naming the source, the masked URL and the method, exit 2', async () => {
    const port = await freePort();
    // The source from the environment alone (docs/ingest.md § Where the URL lives).
    const r = await blockx(['ingest', '--source', 'node', '--from', '0', '--to', '1'], {
      BLOCKX_SOURCE_NODE_RPC_URL: `http://u:secret@127.0.0.1:${port}/`,
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^blockx ingest: source node \\(http://u:\\*\\*\\*@127\\.0\\.0\\.1:${port}/\\) eth_chainId: cannot connect \\(ECONNREFUSED`,
      ),
    );
    expect(r.stderr).not.toContain('secret');
  });

  it.each([
    ['a password', (port: number) => ['--rpc', `http://u:secret@127.0.0.1:${port}/`]],
    ['a query value', (port: number) => ['--rpc', `http://127.0.0.1:${port}/?apikey=secret`]],
    [
      'a key-like path segment, as the fallback',
      (port: number) => [
        '--rpc',
        anvil.url,
        '--fallback-rpc',
        `http://127.0.0.1:${port}/v3/secret0123456789abcdef`,
      ],
    ],
  ])(
    'a URL by flag holding %s is refused before anything is asked, naming where a key goes',
    async (_what, flags) => {
      const port = await freePort();
      const r = await blockx(['ingest', ...flags(port), '--from', '0', '--to', '1']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('holds a key (shown masked)');
      expect(r.stderr).toContain('sources.NAME.rpcUrl (or BLOCKX_SOURCE_NAME_RPC_URL)');
      expect(r.stderr).not.toContain('secret');
      expect(r.stderr).not.toContain('ECONNREFUSED');
    },
  );

  it('a node on another chain than --chain-id is refused, exit 2', async () => {
    const r = await blockx(['ingest', '--rpc', anvil.url, '--chain-id', '1', '--from', '0', '--to', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is on chain 31337, not chain 1');
  });

  it.each([
    [['--from', 'x'], '--from must be an integer'],
    [['--from', '0', '--requests-per-second', '-1'], '--requests-per-second must be an integer in 0..'],
    [['--from', '0', '--source', 'nope'], '--source nope: no sources.nope in the config (declared: none)'],
    [['--from', '5', '--to', '2'], '--to 2 is below --from 5'],
  ])('usage: %j', async (flags, message) => {
    const r = await blockx(['ingest', '--rpc', anvil.url, ...flags]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('--source reads a sources.<name> entry of the config, its chainId included', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blockx-ingest-cli-'));
    try {
      const config = path.join(dir, 'blockx.config.yaml');
      const plugins = `plugins:\n  dirs: [${REPO}/plugins/builders, ${REPO}/plugins/writers]\n`;
      writeFileSync(
        config,
        `version: 1\n${plugins}sources:\n  local:\n    rpcUrl: ${anvil.url}\n    chainId: 5\n`,
      );
      const r = await blockx(['ingest', '--config', config, '--source', 'local', '--from', '0', '--to', '0']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`source local (${anvil.url}/) is on chain 31337, not chain 5`);
      const bad = path.join(dir, 'bad.yaml');
      writeFileSync(bad, 'version: 1\nsources:\n  local:\n    rpcUrl: ftp://x\n    maxAttempts: 0\n');
      const invalid = await blockx(['ingest', '--config', bad, '--source', 'local', '--from', '0']);
      expect(invalid.code).not.toBe(0);
      expect(invalid.stderr).toContain('sources.local');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a URL that is not http(s) is a usage error', async () => {
    const r = await blockx(['ingest', '--rpc', 'ftp://host/', '--from', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not an http:// or https:// URL');
  });
});

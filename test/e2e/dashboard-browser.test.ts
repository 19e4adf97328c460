// The web dashboard in a real browser (docs/dashboard.md): a one-machine cluster from the built CLI
// (`blockx up --no-demo --workers 2`), headless Chromium (Debian's `chromium`) driven over the DevTools
// protocol by puppeteer-core. The page must render the cluster's workers, show a submitted task (one
// that succeeds and one that fails, with its failure code and message) in recent tasks, a backfill job
// with its progress, the follow job of its config live (head, lag, last reorg, runner and term, restarts,
// last error, as the chain tables change under it), and say "disconnected" once the cluster is gone.
//
// Chromium is spawned by this file (spawnTracked: its own process group, so its zygote and renderers die
// with it) and puppeteer connects to it; nothing outlives the file. Without chromium the file is skipped
// with a message, except under CI=true, where that is a failure (scripts/test.mjs installs it).
//
// BLOCKX_UPDATE_SCREENSHOT=1 also writes the page to docs/images/dashboard.png (the README's picture);
// without it the tree is left as it was.
import type { ChildProcess } from 'node:child_process';
import {
  accessSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { connect, type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardSnapshot } from '../../src/contracts/dashboard.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/ports.js';
import {
  captureOutput,
  spawnTracked,
  stopGroup,
  waitForLine,
  type OutputTail,
} from '../support/processes.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const SCREENSHOT = path.join(REPO, 'docs/images/dashboard.png');
/** Generous bounds: a loaded 2-core box starts a cluster and a browser slowly. */
const POLL = { timeoutMs: 60_000, intervalMs: 200 } as const;
/** Blocks of the synthetic chain the backfill runs over. */
const BLOCKS = 40;
/** The follow job's finality: blocks up to BLOCKS − FINALITY are final. */
const FINALITY = 5;

function findChromium(): string | undefined {
  const candidates = [process.env.BLOCKX_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  for (const file of candidates) {
    if (!file) continue;
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // next
    }
  }
  return undefined;
}

const CHROMIUM = findChromium();
const inCi = process.env.CI === 'true';
if (CHROMIUM === undefined && !inCi) {
  console.warn(
    'dashboard-browser.test.ts skipped: no chromium (sudo apt-get install -y chromium, or set BLOCKX_CHROMIUM)',
  );
}

function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_)/.test(k)),
  );
  return { ...env, ...extra };
}

/** Runs the built CLI to completion. */
async function blockx(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawnTracked(process.execPath, [BIN, ...args], { cwd: REPO, env });
  const out = captureOutput(child);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out: out.text() };
}

describe.skipIf(CHROMIUM === undefined && !inCi)('the dashboard in headless chromium', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-dashboard-'));
  const CONFIG = (): string => path.join(dir, 'blockx.config.yaml');
  const DB = (): string => path.join(dir, 'blockx.db');
  let env: NodeJS.ProcessEnv = {};
  let up: ChildProcess | undefined;
  let upOutput: OutputTail | undefined;
  let chromium: ChildProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let dashboardUrl = '';
  let coordinator = '';
  let workers: string[] = [];

  beforeAll(async () => {
    expect(
      CHROMIUM,
      'CI=true and no chromium: scripts/test.mjs installs it (apt-get install chromium)',
    ).toBeDefined();
    const functions = path.join(dir, 'functions');
    mkdirSync(functions);
    // The backfill's function, as shipped; its only import is a type (erased when it is loaded).
    copyFileSync(path.join(REPO, 'functions/erc20_transfers.ts'), path.join(functions, 'erc20_transfers.ts'));
    writeFileSync(
      path.join(functions, 'hello_world.mjs'),
      'export default async function helloWorld(ctx, name) { return `hello, ${name}`; }\n',
    );
    writeFileSync(
      path.join(functions, 'needs_receipts.mjs'),
      'export default async function needsReceipts(ctx, n) {\n' +
        '  throw new Error(`block ${n} has no receipts <script>alert(1)</script>`);\n}\n',
    );
    env = cleanEnv({
      BLOCKX_STORAGE_URL: `sqlite:${DB()}`,
      BLOCKX_FUNCTIONS_DIR: functions,
      // A busy test machine must not make the Coordinator filter its Workers as overloaded.
      COORDINATOR_CPU_RED_LINE: '1',
      COORDINATOR_MEMORY_RED_LINE: '1',
    });
    const chain = await blockx(['data', 'generate', '--chain', '1', '--blocks', String(BLOCKS)], env);
    expect(chain.code, chain.out).toBe(0);
    // The repo's config and one follow job, which blockx up runs and the page shows.
    writeFileSync(
      CONFIG(),
      `${readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8')}\n` +
        `jobs:\n  transfers:\n    template: ${path.join(REPO, 'examples/tasks/block-table-transfers.json')}\n` +
        `    from: 1\n    finality: ${FINALITY}\n    pollIntervalMs: 200\n` +
        `    restartInitialBackoffMs: 300\n    restartMaxBackoffMs: 60000\n`,
    );
    up = spawnTracked(
      process.execPath,
      [BIN, 'up', '--no-demo', '--workers', '2', '--listen', '127.0.0.1:0', '--config', CONFIG()],
      { cwd: REPO, env },
    );
    upOutput = captureOutput(up);
    await waitForLine(up, /^serving; press Ctrl-C/, 90_000);
    const text = upOutput.text();
    dashboardUrl = /^dashboard {2}(http:\/\/\S+)$/m.exec(text)?.[1] ?? '';
    coordinator = /coordinator listening on (\S+)/.exec(text)?.[1] ?? '';
    workers = [...text.matchAll(/worker #\d+ listening on (\S+)/g)].map((m) => m[1] as string);
    expect(dashboardUrl, text).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(workers).toHaveLength(2);

    chromium = spawnTracked(
      CHROMIUM as string,
      [
        '--headless=new',
        '--remote-debugging-port=0',
        `--user-data-dir=${path.join(dir, 'chromium')}`,
        '--no-first-run',
        '--no-default-browser-check',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-extensions',
        // The sandbox needs user namespaces, which a root CI container lacks.
        ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
        'about:blank',
      ],
      { env: { ...process.env, HOME: dir } },
    );
    const devtools = await waitForLine(chromium, /DevTools listening on ws:\/\//, 60_000);
    const endpoint = /(ws:\/\/\S+)/.exec(devtools)?.[1] as string;
    browser = await connect({ browserWSEndpoint: endpoint, protocolTimeout: 60_000 });
    page = await browser.newPage();
    await page.setViewport({ width: 1360, height: 1000 });
  }, 180_000);

  afterAll(async () => {
    await browser?.disconnect().catch(() => undefined);
    if (chromium) await stopGroup(chromium, 'SIGTERM', 5_000);
    if (up) await stopGroup(up, 'SIGTERM', 10_000);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const p = (): Page => page as Page;
  const text = (selector: string): Promise<string> =>
    p().$eval(selector, (node) => (node as { textContent: string | null }).textContent ?? '');

  it('renders the workers of the running cluster, live, with no console errors', async () => {
    const problems: string[] = [];
    p().on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    p().on('pageerror', (err) => problems.push(String(err)));
    const response = await p().goto(dashboardUrl, { waitUntil: 'load', timeout: 60_000 });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await eventually(async () => expect(await text('#connection')).toBe('live'), POLL);
    for (const addr of workers) {
      await p().waitForSelector(`#workers tr[data-worker="${addr}"]`, { timeout: 60_000 });
    }
    await eventually(async () => {
      const routable = await p().$$eval('#workers tbody tr .badge.ok', (nodes) => nodes.length);
      expect(routable).toBe(2);
    }, POLL);
    expect(await text('#coordinator-state')).toBe('coordinator ready');
    expect(await text('#summary')).toContain('2 / 2');
    expect(problems).toEqual([]);
  });

  it('shows a submitted task that succeeds and one that fails, with the failure code and message', async () => {
    const ok = await blockx(
      [
        'submit',
        '--coordinator',
        coordinator,
        '--json',
        writeTask('ok.json', 'hello_world', [['dashboard']]),
      ],
      env,
    );
    expect(ok.code, ok.out).toBe(0);
    const okId = taskIdOf(ok.out);
    const bad = await blockx(
      ['submit', '--coordinator', coordinator, '--json', writeTask('bad.json', 'needs_receipts', [[7]])],
      env,
    );
    expect(bad.code, bad.out).toBe(1);
    const badId = taskIdOf(bad.out);

    const okRow = `#tasks tr[data-task="${okId}"]`;
    const badRow = `#tasks tr[data-task="${badId}"]`;
    await p().waitForSelector(okRow, { timeout: 60_000 });
    await p().waitForSelector(badRow, { timeout: 60_000 });
    await eventually(async () => {
      expect(await text(`${okRow} .badge`)).toBe('SUCCEEDED');
      expect(await text(`${badRow} .badge`)).toBe('FAILED');
    }, POLL);
    const failure = await text(`${badRow} td.failure`);
    expect(failure).toContain('block 7 has no receipts');
    // The message is text, not markup: the page made no <script> of it.
    expect(failure).toContain('<script>alert(1)</script>');
    expect(await p().$$eval('#tasks script', (nodes) => nodes.length)).toBe(0);
    expect(
      await p().$eval(`${badRow} td.failure strong`, (n) => (n.textContent ?? '').length),
    ).toBeGreaterThan(0);
    // The charts count what ended.
    await eventually(async () => {
      const bars = await p().$$eval('#chart-failed rect.col', (nodes) => nodes.length);
      expect(bars).toBeGreaterThan(0);
    }, POLL);
  });

  it('shows a backfill job with its progress', async () => {
    const run = await blockx(
      [
        'backfill',
        path.join(REPO, 'examples/tasks/block-table-transfers.json'),
        '--from',
        '1',
        '--to',
        String(BLOCKS),
        '--coordinator',
        coordinator,
        '--concurrency',
        '4',
        '--state-dir',
        path.join(dir, 'backfill-state'),
        '--json',
      ],
      env,
    );
    expect(run.code, run.out).toBe(0);
    const row = '#backfills tbody tr[data-job]';
    await p().waitForSelector(row, { timeout: 60_000 });
    await eventually(async () => {
      const cells = await p().$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent ?? ''));
      expect(cells[0]).toContain('finished');
      expect(cells[1]).toBe(`1–${BLOCKS} (${BLOCKS} blocks)`);
      expect(cells[2]).toContain('100%');
      expect(cells[3]).toBe(String(BLOCKS));
      expect(cells[4]).toBe('0');
    }, POLL);

    if (process.env.BLOCKX_UPDATE_SCREENSHOT === '1') {
      await p().screenshot({ path: SCREENSHOT as `${string}.png`, fullPage: true });
    }
  });

  it('shows each follow job live: head, lag, last reorg, runner and term, restarts, last error', async () => {
    const row = '#follow-jobs tbody tr[data-follow-job]';
    await p().waitForSelector(row, { timeout: 60_000 });
    const cell = (col: string): Promise<string> => text(`${row} td[data-col="${col}"]`);
    await eventually(async () => {
      expect(await p().$eval(row, (tr) => tr.getAttribute('data-state'))).toBe('running');
      expect(await cell('head')).toBe(String(BLOCKS));
      expect(await cell('finalized')).toBe(String(BLOCKS - FINALITY));
      expect(await cell('lag')).toBe('caught up');
      expect(await cell('reorg')).toBe('none');
      expect(await cell('runner')).toMatch(/pid \d+term 1$/);
      expect(await cell('restarts')).toBe('0');
    }, POLL);

    // The chain gets 2 blocks shorter (above the finalized height): the job removes their outputs, and
    // the page shows the reorg and the new head without a reload.
    const db = new Database(DB());
    try {
      db.prepare('UPDATE blocks SET canonical = 0 WHERE chain_id = 1 AND number > ?').run(BLOCKS - 2);
    } finally {
      db.close();
    }
    await eventually(async () => {
      expect(await cell('head')).toBe(String(BLOCKS - 2));
      expect(await cell('reorg')).toMatch(
        new RegExp(`^2 blocks above ${BLOCKS - 2}, .* ago · 1 in all, deepest 2$`),
      );
    }, POLL);

    // The final block just below the job's cursor (the one it checks on every pass) changes: the runner
    // stops with REORG_BEYOND_FINALITY and blockx up restarts it with backoff; the page counts the
    // restarts, shows the error, and each run's new fencing term.
    const db2 = new Database(DB());
    let final = 0;
    try {
      final = (db2.prepare('SELECT cursor FROM blockx_jobs').get() as { cursor: number }).cursor - 1;
      db2
        .prepare("UPDATE blocks SET hash = '0xdeep' WHERE chain_id = 1 AND number = ? AND canonical = 1")
        .run(final);
    } finally {
      db2.close();
    }
    await eventually(async () => {
      expect(Number(await cell('restarts'))).toBeGreaterThanOrEqual(2);
      expect(await cell('error')).toMatch(
        new RegExp(`block ${final} was final with hash 0x[0-9a-f]+, the chain tables now say 0xdeep`),
      );
      expect(Number(/term (\d+)$/.exec(await cell('runner'))?.[1])).toBeGreaterThanOrEqual(3);
    }, POLL);
  });

  it('says "disconnected" once the cluster is gone', async () => {
    await stopGroup(up as ChildProcess, 'SIGTERM', 10_000);
    await eventually(async () => expect(await text('#connection')).toMatch(/^disconnected since /), POLL);
    expect(await p().$eval('body', (b) => b.classList.contains('disconnected'))).toBe(true);
  });

  function writeTask(name: string, fn: string, callList: unknown[][]): string {
    const file = path.join(dir, name);
    writeFileSync(
      file,
      JSON.stringify({
        functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList } },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      }),
    );
    return file;
  }
});

/** The task id of `blockx submit --json` output. */
function taskIdOf(out: string): string {
  for (const line of out.split('\n')) {
    try {
      const parsed = JSON.parse(line) as { taskId?: unknown; task_id?: unknown };
      const id = parsed.taskId ?? parsed.task_id;
      if (typeof id === 'string') return id;
    } catch {
      // not a JSON line
    }
  }
  throw new Error(`no task id in the submit output:\n${out}`);
}

// `blockx coordinator` with observability.dashboard.listenAddr (here through its variable): the
// Coordinator of a real etcd-backed cluster serves the same page and data. No browser needed.
describe('blockx coordinator serves the dashboard when observability.dashboard.listenAddr is set', () => {
  let cluster: TestCluster | undefined;
  let url = '';

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/`;
    cluster = await startCluster({ workers: 2, env: { BLOCKX_DASHBOARD_LISTEN_ADDR: `127.0.0.1:${port}` } });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('answers the page, and its snapshot lists both workers of the etcd registry', async () => {
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('assets/app.js');
    const workers = (cluster as TestCluster).workers.map((w) => w.addr).sort();
    const snapshot = await eventually(async () => {
      const body = (await (await fetch(`${url}api/snapshot`)).json()) as DashboardSnapshot;
      expect(body.cluster.workers.map((w) => w.workerAddr).sort()).toEqual(workers);
      return body;
    }, POLL);
    expect(snapshot.cluster.ready).toBe(true);
    expect(snapshot.cluster.registryPrefixes[0]).toBe((cluster as TestCluster).registryPrefix);
  });
});

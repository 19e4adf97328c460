#!/usr/bin/env node
// `npm test`: make sure the real servers the e2e tier needs are installed (etcd, PostgreSQL, and Debian's
// `chromium` for the dashboard's browser test), run the checks side by side (build, lint,
// format, typecheck, generated-code freshness), then every vitest project, one tier at a time in TIERS
// order (cheapest first; see test/README.md). The last line printed is always `N passed, N failed,
// N skipped` over all tiers; the exit code is non-zero if a step failed, a test failed, or no test ran.
//
//   npm test                      all checks, then all tests
//   npm test -- --no-build        skip rebuilding dist/ (the process tests spawn the built CLI, so the
//                                 default is to rebuild: a stale dist/ would test old code)
//   npm test -- --project unit    only vitest, with these args (checks are skipped)
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = 'test-results';
// The tiers, in the order they run, each with its vitest projects (vitest.config.ts: the e2e files that
// need the machine to themselves are the `e2e-alone` project, run after the others). Every tier runs (a
// failure in one does not skip the next) and the summary counts them all.
const TIERS = {
  unit: ['unit'],
  integration: ['integration'],
  process: ['process'],
  e2e: ['e2e', 'e2e-alone'],
};
const INSTALL_HINT = 'sudo apt-get install -y etcd-server postgresql python3';
// The browser test (test/e2e/dashboard-browser.test.ts) drives it; without it that file is skipped
// locally, and fails under CI=true.
const CHROMIUM_HINT = 'sudo apt-get install -y chromium';
const inCi = process.env.CI === 'true';
// How many checks run at once: one per core (each is a single-threaded node process), at least two (they
// also wait on the disk).
const CHECK_CONCURRENCY = Math.max(2, availableParallelism());

const argv = process.argv.slice(2);
const skipBuild = argv.includes('--no-build') && process.env.CI !== 'true';
const vitestArgs = argv.filter((arg) => arg !== '--build' && arg !== '--no-build');
const checksWanted = vitestArgs.length === 0;

process.chdir(root);
const code = await main();
process.exit(code);

async function main() {
  const ensured = await ensureServers();
  if (!ensured) {
    console.error(
      'etcd and PostgreSQL (the e2e tests) and python3 (the Python Executor tests) are needed. Install them with:',
    );
    console.log(INSTALL_HINT);
    return 2;
  }

  // The checks read only the sources (build writes dist/, which lint, format and typecheck ignore), so
  // they run side by side, CHECK_CONCURRENCY at a time; each one's output is printed whole when it ends.
  const steps = [];
  if (!skipBuild || !existsSync(join(root, 'dist', 'index.js'))) steps.push(['npm', ['run', 'build']]);
  if (checksWanted) {
    steps.push(['npm', ['run', 'lint']], ['npm', ['run', 'format:check']], ['npm', ['run', 'typecheck']]);
    if (existsSync(join(root, 'scripts', 'check-generated.mjs'))) {
      steps.push([process.execPath, ['scripts/check-generated.mjs']]);
    }
  }
  const failed = await runConcurrently(steps, CHECK_CONCURRENCY);
  if (failed.length > 0) {
    for (const { cmd, args, status } of failed) {
      console.log(`test: stopped, \`${label(cmd, args)}\` failed (exit ${status}); tests not run`);
    }
    console.log(summaryLine({ passed: 0, failed: 0, skipped: 0 }));
    return 1;
  }

  mkdirSync(resultsDir, { recursive: true });
  // With vitest arguments: one run with exactly those. Without: one run per tier, in order (an empty tier
  // is not a failure by itself; "no test ran" is checked over all of them below).
  const runs = checksWanted
    ? Object.entries(TIERS).map(([tier, projects]) => [
        `vitest-${tier}.json`,
        [...projects.flatMap((project) => ['--project', project]), '--passWithNoTests'],
      ])
    : [['vitest.json', vitestArgs]];
  let vitestStatus = 0;
  const resultsFiles = [];
  for (const [file, args] of runs) {
    const resultsFile = join(resultsDir, file);
    rmSync(resultsFile, { force: true });
    resultsFiles.push(resultsFile);
    const status = await runStep('npx', [
      'vitest',
      'run',
      '--reporter=default',
      '--reporter=json',
      `--outputFile=${resultsFile}`,
      ...args,
    ]);
    if (status !== 0 && vitestStatus === 0) vitestStatus = status;
  }

  const counts = readCounts(resultsFiles);
  if (typeof counts === 'string') {
    console.log(`test: vitest exited ${vitestStatus} without writing ${counts}`);
    console.log(summaryLine({ passed: 0, failed: 0, skipped: 0 }));
    return 1;
  }
  for (const line of counts.failures) console.log(line);
  if (counts.failedFiles > 0) console.log(`test: ${counts.failedFiles} test file(s) failed to run`);
  if (counts.passed + counts.failed === 0) console.log('test: no tests ran');
  if (vitestStatus !== 0 && counts.failed === 0 && counts.failedFiles === 0) {
    console.log(`test: vitest exited ${vitestStatus}`);
  }
  console.log(summaryLine(counts));
  return vitestStatus !== 0 || counts.failed > 0 || counts.failedFiles > 0 || counts.passed === 0 ? 1 : 0;
}

/**
 * True when etcd, PostgreSQL and python3 (the Python Executor's tests) are present, installing what is missing with apt-get when running as
 * root (chromium and iproute2 too, each in an apt-get run of its own). A missing chromium is not fatal here: the browser test
 * skips itself with a message, except under CI=true, where it fails. Nor is a missing iproute2 (`ip`): the
 * partition tests (test/e2e/partitions.test.ts) skip themselves and say why.
 */
async function ensureServers() {
  const missing = () =>
    [
      findEtcd() ? undefined : 'etcd',
      findInitdb() ? undefined : 'postgresql',
      findPython() ? undefined : 'python3',
    ].filter(Boolean);
  const servers = [
    ...(findEtcd() ? [] : ['etcd-server']),
    ...(findInitdb() ? [] : ['postgresql']),
    ...(findPython() ? [] : ['python3']),
  ];
  const wantChromium = !findChromium();
  const wantIp = !findIp();
  if (servers.length === 0 && !wantChromium && !wantIp) return true;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !onPath('apt-get')) {
    if (wantChromium) warnNoChromium();
    if (servers.length > 0) console.error(`test: missing ${missing().join(' and ')}`);
    return servers.length === 0;
  }
  console.log(
    `test: missing ${[...servers, ...(wantChromium ? ['chromium'] : []), ...(wantIp ? ['iproute2'] : [])].join(', ')}; installing with apt-get`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if ((await runStep('apt-get', ['update'], env)) !== 0 && servers.length > 0) return false;
  if (servers.length > 0 && (await runStep('apt-get', ['install', '-y', ...servers], env)) !== 0)
    return false;
  // Its own run: a chromium that cannot be installed must not keep the servers from being installed.
  if (wantChromium) await runStep('apt-get', ['install', '-y', 'chromium'], env);
  if (wantIp) await runStep('apt-get', ['install', '-y', 'iproute2'], env);
  if (!findChromium()) warnNoChromium();
  return missing().length === 0;
}

function warnNoChromium() {
  console.error(
    inCi
      ? `test: chromium is missing and CI=true: the dashboard browser test will fail (${CHROMIUM_HINT})`
      : `test: chromium is missing: the dashboard browser test is skipped (${CHROMIUM_HINT})`,
  );
}

function findChromium() {
  return (
    (process.env.BLOCKX_CHROMIUM !== undefined && isExecutable(process.env.BLOCKX_CHROMIUM)) ||
    isExecutable('/usr/bin/chromium') ||
    isExecutable('/usr/bin/chromium-browser')
  );
}

/** The interpreter the Python Executor tests use: `BLOCKX_PYTHON`, else python3 (docs/executor.md). */
function findPython() {
  const chosen = process.env.BLOCKX_PYTHON;
  return chosen !== undefined && chosen !== '' ? isExecutable(chosen) || onPath(chosen) : onPath('python3');
}

/** iproute2's `ip`, which the partition tests' network namespaces need. */
function findIp() {
  return onPath('ip') || isExecutable('/usr/sbin/ip') || isExecutable('/sbin/ip');
}

function findEtcd() {
  return onPath('etcd') || isExecutable('/usr/bin/etcd');
}

function findInitdb() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return false;
  return readdirSync(base).some((version) => isExecutable(join(base, version, 'bin', 'initdb')));
}

function onPath(name) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => isExecutable(join(dir, name)));
}

function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Run one step with inherited stdio, framed by a header and a footer with its duration. */
function runStep(cmd, args, env = process.env) {
  const name = label(cmd, args);
  console.log(`\n=== ${name}`);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env });
    const finish = (status, note) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`=== ${name}: ${status === 0 ? 'ok' : `FAILED (${note})`} in ${seconds}s`);
      resolve(status);
    };
    child.once('error', (err) => finish(127, err.message));
    child.once('close', (status, signal) =>
      finish(status ?? 1, signal ? `signal ${signal}` : `exit ${status}`),
    );
  });
}

/**
 * Run steps `limit` at a time, each with its output collected and printed as one block (a header, the
 * output, a footer with the status and duration) when it ends. Resolves with the steps that failed.
 */
async function runConcurrently(steps, limit) {
  if (steps.length === 1) {
    const [[cmd, args]] = steps;
    const status = await runStep(cmd, args);
    return status === 0 ? [] : [{ cmd, args, status }];
  }
  const failed = [];
  const queue = [...steps];
  const lane = async () => {
    for (let step = queue.shift(); step !== undefined; step = queue.shift()) {
      const [cmd, args] = step;
      const status = await runCollected(cmd, args);
      if (status !== 0) failed.push({ cmd, args, status });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, steps.length) }, lane));
  return failed;
}

/** Like runStep, but the child's stdout and stderr are collected and printed once it has ended. */
function runCollected(cmd, args) {
  const name = label(cmd, args);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    let ended = false;
    const finish = (status, note) => {
      if (ended) return;
      ended = true;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`\n=== ${name}`);
      process.stdout.write(Buffer.concat(chunks));
      console.log(`=== ${name}: ${status === 0 ? 'ok' : `FAILED (${note})`} in ${seconds}s`);
      resolve(status);
    };
    child.once('error', (err) => finish(127, err.message));
    child.once('close', (status, signal) =>
      finish(status ?? 1, signal ? `signal ${signal}` : `exit ${status}`),
    );
  });
}

function label(cmd, args) {
  return [cmd === process.execPath ? 'node' : cmd, ...args].join(' ');
}

/** Counts summed over vitest's JSON reports (skipped covers skipped, pending and todo tests), or the
 * first report that is missing or unreadable. */
function readCounts(files) {
  const counts = { passed: 0, failed: 0, skipped: 0, failedFiles: 0, failures: [] };
  for (const resultsFile of files) {
    let report;
    try {
      report = JSON.parse(readFileSync(resultsFile, 'utf8'));
    } catch {
      return resultsFile;
    }
    for (const file of report.testResults ?? []) {
      const assertions = file.assertionResults ?? [];
      for (const test of assertions) {
        if (test.status === 'passed') counts.passed++;
        else if (test.status === 'failed') {
          counts.failed++;
          counts.failures.push(failureLine(file.name, test.fullName ?? test.title, test.failureMessages));
        } else counts.skipped++;
      }
      // A file that failed outside any test (import error, failing beforeAll) has no failed assertion.
      if (file.status === 'failed' && !assertions.some((test) => test.status === 'failed')) {
        counts.failedFiles++;
        counts.failures.push(failureLine(file.name, '(the file itself)', [file.message]));
      }
    }
  }
  return counts;
}

/** One line naming a failed test and the first line of its error (printed again just above the summary,
 * so a log's tail says what failed). */
function failureLine(fileName, testName, messages) {
  const file = relative(process.cwd(), fileName ?? '?');
  const first = String((messages ?? []).find((m) => m) ?? '')
    .split('\n')[0]
    .slice(0, 300);
  return `FAILED ${file} > ${testName}${first === '' ? '' : `: ${first}`}`;
}

function summaryLine({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed, ${skipped} skipped`;
}

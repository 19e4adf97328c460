#!/usr/bin/env node
// `npm run bench [-- NAME...] [-- --only NAME[,NAME]]`: runs the benchmarks in bench/ one after another
// (never in parallel: each measures ratios against a baseline in its own run, and the machine is shared).
// With names, only those (e.g. `npm run bench -- --only calls,bullmq`). Each prints markdown tables; this
// script echoes them, then writes bench/RESULTS.md (machine, versions, date, every bench's tables verbatim)
// and bench/results-chart.svg (throughput of BlockX beside its peers). Peers (BullMQ + redis-server,
// Piscina) are installed by the benches themselves into bench/.work/, only when benchmarking. It runs
// `npm run build` first: benches run the built CLI and executor where they can, as `npm start` does.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, release, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const all = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
const { values, positionals } = parseArgs({
  options: {
    only: { type: 'string' },
    'no-results': { type: 'boolean', default: false },
    'results-only': { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const wanted = [...positionals, ...(values.only ?? '').split(',').filter(Boolean)];
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${all.join(', ')}`);
  process.exit(2);
}
let selected = wanted.length ? all.filter((n) => wanted.includes(n)) : all;
const started = new Date();
let load = loadavg()[0].toFixed(2);
console.log(
  `# BlockX benchmarks — ${started.toISOString()}, Node ${process.version}, ${cpus().length} cores, load ${load}\n`,
);

/** Runs one bench under tsx; its stdout is echoed and kept, its stderr passes through. */
function runBench(name) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', `${name}.ts`)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d.toString();
      process.stdout.write(d);
    });
    child.on('close', (code, signal) => resolve({ name, out, status: code ?? signal }));
  });
}

const saved = join(root, 'bench', '.work', 'last-run.json');
if (values['results-only']) {
  // Rebuild RESULTS.md and the chart from the outputs the last run saved, without running anything.
  const last = JSON.parse(readFileSync(saved, 'utf8'));
  started.setTime(Date.parse(last.started));
  load = last.load;
  wanted.splice(0, wanted.length, ...last.wanted);
  selected = last.results.map((r) => r.name);
  writeResults(last.results);
  process.exit(0);
}

// The system under test runs as deployed where a bench can: the built CLI and executor (dist/). Build
// first, so dist/ is never older than the sources being measured.
const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
if (build.status !== 0) {
  console.error('npm run build failed; not benchmarking stale or missing dist/');
  process.exit(1);
}

const results = [];
let failed = 0;
for (const name of selected) {
  console.log(`## ${name}\n`);
  const t0 = Date.now();
  const r = await runBench(name);
  r.seconds = (Date.now() - t0) / 1000;
  if (r.status !== 0) {
    failed++;
    console.log(`\n(${name} exited with ${r.status})\n`);
  }
  results.push(r);
}
mkdirSync(dirname(saved), { recursive: true });
writeFileSync(saved, JSON.stringify({ started, load, wanted, results }));
if (!values['no-results']) writeResults(results);
process.exit(failed ? 1 : 0);

// ---- bench/RESULTS.md and bench/results-chart.svg --------------------------------------------------

function pkgVersion(dir, name) {
  const p = join(dir, 'node_modules', name, 'package.json');
  return existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')).version : 'not installed';
}

function cmdVersion(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().split('\n')[0] : 'not installed';
}

function osName() {
  try {
    const m = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (m) return `${m[1]} (${platform()} ${release()})`;
  } catch {
    /* not Linux */
  }
  return `${platform()} ${release()}`;
}

/** `<!-- bench-chart NAME {json} -->` lines the benches print for the chart. */
function chartData(out) {
  const data = {};
  for (const m of out.matchAll(/<!-- bench-chart (\S+) (\{.*\}) -->/g)) data[m[1]] = JSON.parse(m[2]);
  return data;
}

/** Rows of the markdown tables in `out`, as arrays of cells. */
function tableRows(out) {
  return out
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|\s*-/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
}

function num(s) {
  return Number(String(s).replace(/[^0-9.]/g, ''));
}

function chartGroups(results) {
  const groups = [];
  const bull = results.find((r) => r.name === 'bullmq');
  if (bull) {
    const d = chartData(bull.out).bullmq ?? {};
    const bars = Object.entries(d).map(([label, value]) => ({ label, value }));
    if (bars.length) groups.push({ title: 'Empty tasks / jobs, 64 concurrent producers (ops/s)', bars });
  }
  const calls = results.find((r) => r.name === 'calls');
  if (calls) {
    const bars = tableRows(calls.out)
      .filter((c) => c.length >= 3 && c[0] !== 'path' && Number.isFinite(num(c[2])) && num(c[2]) > 0)
      .map((c) => ({ label: c[0], value: num(c[2]) }));
    if (bars.length) groups.push({ title: '100,000 no-op calls (calls/s)', bars });
  }
  const rss = results.find((r) => r.name === 'worker-rss');
  const d = rss ? chartData(rss.out)['worker-rss'] : undefined;
  if (d)
    groups.push({
      title: 'Worker RSS, MiB: fresh (1,000 retained results) and after 100,000 more',
      bars: [
        { label: 'Worker RSS before', value: d.rssBefore / 1024 ** 2 },
        { label: 'Worker RSS after 100,000 retained results', value: d.rssAfter / 1024 ** 2 },
      ],
    });
  return groups;
}

function esc(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Horizontal bars, each group scaled to its own maximum. No dependencies: plain SVG text. */
function svgChart(groups) {
  const W = 900;
  const labelW = 470;
  const barMax = W - labelW - 110;
  const rowH = 26;
  let y = 40;
  const parts = [];
  parts.push(
    `<text x="10" y="24" font-size="16" font-weight="bold">BlockX beside its peers — ${esc(started.toISOString().slice(0, 10))}, ${cpus().length} cores</text>`,
  );
  for (const g of groups) {
    y += 14;
    parts.push(`<text x="10" y="${y}" font-size="14" font-weight="bold">${esc(g.title)}</text>`);
    y += 10;
    const max = Math.max(...g.bars.map((b) => b.value));
    for (const b of g.bars) {
      const w = Math.max(1, Math.round((b.value / max) * barMax));
      const blockx = /blockx|dispatcher|worker/i.test(b.label);
      const label = b.label.length > 70 ? `${b.label.slice(0, 67)}…` : b.label;
      parts.push(
        `<text x="${labelW - 8}" y="${y + 17}" font-size="12" text-anchor="end">${esc(label)}</text>`,
      );
      parts.push(
        `<rect x="${labelW}" y="${y + 4}" width="${w}" height="${rowH - 8}" fill="${blockx ? '#2b6cb0' : '#a0aec0'}"/>`,
      );
      parts.push(
        `<text x="${labelW + w + 6}" y="${y + 17}" font-size="12">${Math.round(b.value).toLocaleString('en-US')}</text>`,
      );
      y += rowH;
    }
    y += 8;
  }
  y += 10;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${y}" viewBox="0 0 ${W} ${y}" font-family="sans-serif">\n` +
    `<rect width="${W}" height="${y}" fill="white"/>\n${parts.join('\n')}\n</svg>\n`
  );
}

/**
 * The sections of the current RESULTS.md for benches not in this run, keyed by name, so a partial run
 * (`--only`) replaces its own sections and keeps the others. Each kept section says which run it comes
 * from (a first line added the first time it is kept, when that is the date of the whole file).
 */
function previousSections() {
  const mark = '_From the run of '; // not a top-level const: --results-only calls this before those run
  const file = join(root, 'bench', 'RESULTS.md');
  const sections = new Map();
  if (!existsSync(file)) return sections;
  const text = readFileSync(file, 'utf8');
  const date = /^Generated by .* on (\S+?)\.? Do not edit/m.exec(text)?.[1] ?? 'an unknown date';
  const parts = text.split(/^## (\S+)\n/m);
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const name = parts[i];
    if (!all.includes(name) || selected.includes(name)) continue;
    const body = parts[i + 1].replace(/^\n+|\n+$/g, '');
    sections.set(name, body.startsWith(mark) ? body : `${mark}${date}._\n\n${body}`);
  }
  return sections;
}

function writeResults(results) {
  const work = join(root, 'bench', '.work');
  const cpu = cpus();
  const partial = selected.length < all.length;
  const kept = partial ? previousSections() : new Map();
  // The chart needs every peer bench's figures: a partial run leaves results-chart.svg as it is.
  const groups = partial ? [] : chartGroups(results);
  const lines = [
    '# BlockX benchmark results',
    '',
    `Generated by \`npm run bench${wanted.length ? ` -- --only ${selected.join(',')}` : ''}\` (scripts/bench.mjs) on ${started.toISOString()}. Do not edit by hand.`,
    '',
    `Benches in this run: ${selected.join(', ')}${selected.length < all.length ? ` (not run: ${all.filter((n) => !selected.includes(n)).join(', ')})` : ' (all)'}.`,
    ...(kept.size > 0
      ? [
          '',
          `Sections of benches not in this run (${[...kept.keys()].join(', ')}) are kept from earlier runs, ` +
            'each marked with its date; the machine, load and versions below are this run’s.',
        ]
      : []),
    '',
    '## Machine',
    '',
    `- CPU: ${cpu.length} × ${cpu[0]?.model ?? 'unknown'}`,
    `- RAM: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `- OS: ${osName()}`,
    `- load average at the start: ${load}`,
    '',
    '## Versions',
    '',
    `- Node ${process.version}, npm ${cmdVersion('npm', ['--version'])}`,
    `- @grpc/grpc-js ${pkgVersion(root, '@grpc/grpc-js')}`,
    `- bullmq ${pkgVersion(work, 'bullmq')}, ioredis ${pkgVersion(work, 'ioredis')}, redis-server ${/v=(\S+)/.exec(cmdVersion('redis-server', ['--version']))?.[1] ?? 'not installed'}`,
    `- piscina ${pkgVersion(work, 'piscina')}`,
    `- PostgreSQL: ${cmdVersion('psql', ['--version'])}; better-sqlite3 ${pkgVersion(root, 'better-sqlite3')}`,
    '',
    'Each bench reports medians over several runs (see its own header line). Peers are installed on demand',
    'into bench/.work/ (gitignored); redis-server comes from Debian (`apt-get install redis-server`).',
    '',
  ];
  if (groups.length || (partial && existsSync(join(root, 'bench', 'results-chart.svg'))))
    lines.push('![throughput chart](results-chart.svg)', '');
  const byName = new Map(results.map((r) => [r.name, r]));
  for (const name of all.filter((n) => byName.has(n) || kept.has(n))) {
    const r = byName.get(name);
    if (r === undefined) {
      lines.push(`## ${name}`, '', kept.get(name), '');
      continue;
    }
    lines.push(
      `## ${r.name}`,
      '',
      `(${r.seconds.toFixed(0)} s${r.status === 0 ? '' : `, exited with ${r.status}`})`,
      '',
    );
    const body = r.out
      .split('\n')
      .filter((l) => !l.startsWith('<!-- bench-chart'))
      .join('\n')
      .replace(/^\n+|\n+$/g, '')
      .replace(/^## /gm, '### ');
    lines.push(body, '');
  }
  writeFileSync(join(root, 'bench', 'RESULTS.md'), lines.join('\n'));
  if (groups.length) writeFileSync(join(root, 'bench', 'results-chart.svg'), svgChart(groups));
  console.log(`\nwrote bench/RESULTS.md${groups.length ? ' and bench/results-chart.svg' : ''}`);
}

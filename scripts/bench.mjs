#!/usr/bin/env node
// `npm run bench [-- NAME...]`: runs the benchmarks in bench/ one after another (never in parallel: each
// measures ratios against a baseline in its own run, and the machine is shared). With names, only those
// (e.g. `npm run bench -- calls reserve`). Each prints a markdown table; this script adds a header.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const all = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${all.join(', ')}`);
  process.exit(2);
}
console.log(
  `# BlockX benchmarks — ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)}\n`,
);
let failed = 0;
for (const name of wanted.length ? wanted : all) {
  console.log(`## ${name}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench', `${name}.ts`)], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    failed++;
    console.log(`\n(${name} exited with ${r.status ?? r.signal})\n`);
  }
}
process.exit(failed ? 1 : 0);

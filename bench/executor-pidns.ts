// What does a PID namespace of its own add to an Executor's start? (issue 32; docs/security.md § An
// Executor as PID 1 of its own PID namespace)
//
//   npx tsx bench/executor-pidns.ts [--starts 10]
//
// An Executor starts with its Worker, after a crash, and when it is restarted for the zombies it holds.
// Each round starts the built JS executor (bin/blockx.js executor, the Worker's default command) behind
// an ExecutorSupervisor twice, once plain and once as PID 1 of its own namespace (util-linux unshare,
// as the Worker does as root), in alternating order, and times spawn → first heartbeat (ready), then
// stops it. Medians of each; the ratio is the namespace's start against the plain start of the same
// run (the box is shared: read the ratio, not the milliseconds). Needs root and util-linux.

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type * as NamespaceModule from '../src/services/call-host/adapters/executor-pid-namespace.js';
import type * as SupervisorModule from '../src/services/call-host/adapters/executor-supervisor.js';
import { builtLabel, loadBuilt } from './lib/built.js';

const { values } = parseArgs({ options: { starts: { type: 'string', default: '10' } } });
const STARTS = Number(values.starts);

const { ExecutorSupervisor } = await loadBuilt<typeof SupervisorModule>(
  'services/call-host/adapters/executor-supervisor',
);
const { resolvePidNamespace } = await loadBuilt<typeof NamespaceModule>(
  'services/call-host/adapters/executor-pid-namespace',
);

const decision = resolvePidNamespace(true, false);
if (decision.kind !== 'on') {
  console.error(`no PID namespace here: ${decision.kind === 'off' ? 'not root' : decision.warning}`);
  process.exit(2);
}
const functionsDir = fileURLToPath(new URL('../test/fixtures/functions/', import.meta.url));

/** Spawn → ready of one executor, in ms. */
async function startOnce(ns: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bx-pidns-bench-'));
  const sup = new ExecutorSupervisor({
    functionsDir,
    socketPath: join(dir, 'executor.sock'),
    onLog: () => undefined,
    ...(ns && decision.kind === 'on' ? { pidNamespace: decision.tools } : {}),
  });
  try {
    const t0 = performance.now();
    await sup.start();
    await sup.whenReady();
    return performance.now() - t0;
  } finally {
    await sup.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

console.log(`# executor start with and without a PID namespace, ${STARTS} each; ${builtLabel()}`);
console.log(`load (1 min) at start: ${loadavg()[0]!.toFixed(1)}`);
const plain: number[] = [];
const inNs: number[] = [];
for (let i = 0; i < STARTS; i++) {
  // Alternate which goes first, so a trend in the box's load falls on both.
  for (const ns of i % 2 === 0 ? [false, true] : [true, false]) (ns ? inNs : plain).push(await startOnce(ns));
}
const p = median(plain);
const n = median(inNs);
console.log(`plain:              ${p.toFixed(1)} ms (median; ${plain.map((x) => x.toFixed(0)).join(' ')})`);
console.log(`own PID namespace:  ${n.toFixed(1)} ms (median; ${inNs.map((x) => x.toFixed(0)).join(' ')})`);
console.log(`namespace / plain:  ${(n / p).toFixed(2)}×`);
console.log(`load (1 min) at end: ${loadavg()[0]!.toFixed(1)}`);

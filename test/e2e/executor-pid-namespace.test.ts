// Executors as PID 1 of their own PID namespace on a real cluster (docs/security.md § An Executor as PID 1
// of its own PID namespace): a Worker running as root, with mutual TLS and the Executors as a user of their
// own. Alice's JS and Python functions start a child process that finds its Executor as any function could
// (its parent in /proc, getppid) and sends it every signal, SIGKILL and SIGSTOP among them; meanwhile bob
// runs tasks on the same Executors. Alice's task ends with its own outcome (the kill "succeeds" and the
// kernel drops it, or the Python seccomp filter refuses it first), every task of bob's succeeds, and the
// Executor bob's calls run on is the one that ran before (the start time of PID 1 in their namespace). The
// fork storm, and the zombies its orphans leave with the JS Executor, are test/e2e/executor-user.test.ts's.
// Needs root and util-linux; skipped with the reason elsewhere.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyAndCert } from '../../src/cli/certs/dev-ca.js';
import { BlockxClient } from '../../src/client/client.js';
import type { TlsPem } from '../../src/kernel/tls-files.js';
import { packagePath } from '../../src/kernel/package-root.js';
import { resolvePidNamespace } from '../../src/services/call-host/adapters/executor-pid-namespace.js';
import { resolveExecutorUser } from '../../src/services/call-host/adapters/executor-user.js';
import { loopbackTls } from '../support/certs.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

/** A uid:gid no other process runs as: RLIMIT_NPROC counts this test's Executors alone. */
const USER = '64126:64126';
const MAX_PROCESSES = 150;
const VICTIM_TASKS = 12;

const decision = resolvePidNamespace(true, true);
const root = mkdtempSync(path.join(tmpdir(), 'blockx-pidns-'));
chmodSync(root, 0o755);
const functionsDir = path.join(root, 'functions');
const reach = resolveExecutorUser(USER, [packagePath('bin', 'blockx.js'), packagePath('node_modules'), root]);
const why =
  decision.kind === 'off'
    ? 'not root'
    : decision.kind === 'off-with-warning'
      ? decision.warning
      : reach.kind !== 'drop'
        ? `${USER} cannot run here: ${JSON.stringify(reach)}`
        : '';

/** Every signal, then SIGKILL and SIGSTOP with their exit codes, at `$target`. */
const ATTACK =
  'for s in $(seq 1 64); do kill -$s $target 2>/dev/null; done; kill -KILL $target; k=$?; kill -STOP $target; ' +
  'echo "$k $?"';

const JS_ATTACK = `import { spawnSync } from 'node:child_process';
// The child finds the Executor as its own parent (/proc/$$/stat, field 4).
export default async function attack() {
  const r = spawnSync('bash', ['-c', 'target=$(cut -d" " -f4 /proc/$$/stat); ${ATTACK}'], { encoding: 'utf8', timeout: 30000 });
  return { out: r.stdout.trim(), stderr: r.stderr };
}
`;
const PY_ATTACK = `import os
import subprocess


def main(ctx):
    # Its parent: the Python Executor's router, or, in a PID namespace of its own (own_pidns.py), that
    # namespace's init (the router has no pid there).
    router = os.getppid()
    r = subprocess.run(["bash", "-c", 'target=%d; ${ATTACK}' % router], capture_output=True, text=True, timeout=30)
    return {"out": r.stdout.strip(), "stderr": r.stderr, "router": router}
`;
// Which Executor served the call: PID 1 of its namespace, and when it started (field 22 of its stat).
const JS_ALIVE = `import { readFileSync } from 'node:fs';
export default async function alive() {
  const stat = readFileSync('/proc/1/stat', 'utf8');
  return { pid: process.pid, started: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] };
}
`;
const PY_ALIVE = `import os


def main(ctx):
    # /proc is the Executor's namespace's: /proc/1 is the router, whatever namespace this process is in.
    with open("/proc/1/stat") as fh:
        return {"pid": os.getppid(), "started": fh.read().rsplit(")", 1)[1].split()[19]}
`;

const tls = loopbackTls(root);
const pem = (kc: KeyAndCert): TlsPem => ({ ca: tls.ca.cert, cert: kc.cert, key: kc.key });

describe.skipIf(why !== '')(
  `executors as PID 1 of their own PID namespace${why ? ` (skipped: ${why})` : ''}`,
  () => {
    let cluster: TestCluster;
    let alice: BlockxClient;
    let bob: BlockxClient;

    beforeAll(async () => {
      mkdirSync(functionsDir, { mode: 0o755 });
      writeFileSync(path.join(functionsDir, 'attack.ts'), JS_ATTACK);
      writeFileSync(path.join(functionsDir, 'attack_py.py'), PY_ATTACK);
      writeFileSync(path.join(functionsDir, 'alive.ts'), JS_ALIVE);
      writeFileSync(path.join(functionsDir, 'alive_py.py'), PY_ALIVE);
      cluster = await startCluster({
        workers: 1,
        taskSlots: 16,
        functionsDir,
        env: { BLOCKX_TLS_CA: tls.files.ca, BLOCKX_TLS_CERT: tls.files.cert, BLOCKX_TLS_KEY: tls.files.key },
        clientTls: pem(tls.node),
        configPatch: (doc) => {
          const deployments = doc['deployments'] as Record<
            string,
            { executor?: Record<string, unknown>; worker?: Record<string, unknown> }
          >;
          for (const d of Object.values(deployments)) {
            d.executor = { ...d.executor, user: USER, maxProcesses: MAX_PROCESSES, threads: 2 };
            // 66 kill commands on a shared, loaded box may take longer than the default 5 s budget.
            d.worker = { ...d.worker, callDeadlineMs: 30_000 };
          }
        },
      });
      alice = new BlockxClient({ coordinator: cluster.coordinatorAddr, tls: pem(tls.issue('alice')) });
      bob = new BlockxClient({ coordinator: cluster.coordinatorAddr, tls: pem(tls.issue('bob')) });
    }, 120_000);

    afterAll(async () => {
      alice?.close();
      bob?.close();
      await cluster?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    const run = async (client: BlockxClient, fn: string): Promise<Record<string, unknown>> => {
      const r = await client.run({
        functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList: [[]] } },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      });
      expect(r.state, `${fn}: ${r.failureMessage}\n${cluster.output()}`).toBe('SUCCEEDED');
      return (r.pluginResults[0]?.result as Record<string, unknown>[])[0]!;
    };

    it.each([
      { lang: 'JS', attack: 'attack', alive: 'alive', refused: '0 0' },
      // The seccomp filter of the execution process refuses a signal to the router before the namespace
      // could drop it (exit 1); where the filter cannot be installed the kernel drops it (exit 0).
      { lang: 'Python', attack: 'attack_py', alive: 'alive_py', refused: /^[01] [01]$/ },
    ])(
      '$lang: a child signalling its Executor does nothing to it; bob’s tasks succeed on the same Executor',
      async ({ attack, alive, refused }) => {
        const before = await run(bob, alive);
        expect(before.pid).toBe(1);
        const attacked = run(alice, attack);
        const victims = Promise.all(Array.from({ length: VICTIM_TASKS }, () => run(bob, alive)));
        const seen = await attacked;
        expect(seen.out).toEqual(typeof refused === 'string' ? refused : expect.stringMatching(refused));
        for (const v of await victims) expect(v).toEqual(before);
        expect(await run(bob, alive)).toEqual(before);
      },
      120_000,
    );
  },
);

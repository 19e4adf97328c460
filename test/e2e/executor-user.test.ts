// Executors as their own user (docs/security.md § Executors as their own user): a real Worker running as
// root with `executor.user` set to an id no one else uses runs a JS and a Python function that try what a
// hostile one would: read the storage file, a 0600 key file and the Worker's /proc/PID/environ, signal
// its Worker, fork past `executor.maxProcesses`, allocate past `executor.memoryMaxMb` (where the host
// lets the Worker make a memory cgroup). Each fails or is contained, the functions see their own uid,
// and a plain task runs after them. Needs root (CI runs as root); elsewhere it is skipped. Where the
// Executors run in a PID namespace of their own (executor.pidNamespace, the default as root), the Worker
// is not even there to name: the signal finds no such process and its /proc entry does not exist.
//
// The Executor must reach the package it runs from. When this checkout sits under a folder other users
// cannot enter, the Worker refuses a named user (a config error naming the folder): that branch is
// asserted instead, since a named user must never silently become root.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { packagePath } from '../../src/kernel/package-root.js';
import { openExecutorCgroup } from '../../src/services/call-host/adapters/executor-cgroup.js';
import { resolvePidNamespace } from '../../src/services/call-host/adapters/executor-pid-namespace.js';
import { resolveExecutorUser } from '../../src/services/call-host/adapters/executor-user.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { zombiesOf } from '../support/processes.js';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
/** A uid:gid with no passwd entry and no other process: RLIMIT_NPROC counts this test's Executor alone. */
const USER = '64123:64123';
const MAX_PROCESSES = 100;

const root = mkdtempSync(path.join(tmpdir(), 'blockx-executor-user-'));
chmodSync(root, 0o755);
const functionsDir = path.join(root, 'functions');
mkdirSync(functionsDir, { mode: 0o755 });
const keyFile = path.join(root, 'worker.key');
writeFileSync(keyFile, 'not for functions\n', { mode: 0o600 });
const storageFile = path.join(root, 'blockx.db');
writeFileSync(
  path.join(functionsDir, 'probe.ts'),
  `import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

function attempt(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

export default async function probe(_ctx: unknown, paths: string[], forks: number, worker: number): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { uid: process.getuid?.(), gid: process.getgid?.() };
  for (const p of paths) out[p] = attempt(() => readFileSync(p));
  out.signalWorker = attempt(() => process.kill(worker, 0));
  out.workerEnviron = attempt(() => readFileSync(\`/proc/\${worker}/environ\`));
  const storm = spawnSync('sh', ['-c', 'i=0; while [ $i -lt ' + forks + ' ]; do sleep 2 & i=$((i+1)); done; wait'], {
    encoding: 'utf8',
    timeout: 20000,
  });
  out.stormStderr = storm.stderr;
  return out;
}
`,
);

// The Python probe: its execution process's parent is the router (whose parent is the Worker), or, in a PID
// namespace of its own (blockx_executor/own_pidns.py), that namespace's init, PID 1 there.
writeFileSync(
  path.join(functionsDir, 'probe_py.py'),
  `import os
import subprocess


def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as err:
        return {1: "EPERM", 2: "ENOENT", 3: "ESRCH", 13: "EACCES"}.get(err.errno, str(err))


def read(path):
    with open(path, "rb") as fh:
        fh.read()


def main(ctx, paths, forks, worker):
    router = os.getppid()
    out = {"uid": os.getuid(), "gid": os.getgid()}
    for p in paths:
        out[p] = attempt(lambda: read(p))
    out["signalWorker"] = attempt(lambda: os.kill(worker, 0))
    out["signalRouter"] = attempt(lambda: os.kill(router, 0))
    out["ownNamespace"] = os.getpid() == 2 and router == 1
    out["workerEnviron"] = attempt(lambda: read("/proc/%d/environ" % worker))
    storm = subprocess.run(["sh", "-c", "i=0; while [ $i -lt %d ]; do sleep 2 & i=$((i+1)); done; wait" % forks],
                           capture_output=True, text=True, timeout=20)
    out["stormStderr"] = storm.stderr
    return out
`,
);
writeFileSync(
  path.join(functionsDir, 'hog.ts'),
  'export default async (_ctx: unknown, mb: number) => Buffer.alloc(mb * 1024 * 1024, 1).length;\n',
);
writeFileSync(
  path.join(functionsDir, 'hog_py.py'),
  'def main(ctx, mb):\n    return len(b"x" * (mb * 1024 * 1024))\n',
);
writeFileSync(path.join(functionsDir, 'hello.ts'), 'export default async () => "hello";\n');
const MEMORY_MAX_MB = 256;
const ceiling = openExecutorCgroup('probe', MEMORY_MAX_MB);
if (ceiling.kind === 'ok') ceiling.cgroup.remove();

const needs = [packagePath('bin', 'blockx.js'), packagePath('node_modules'), functionsDir];
const decision = resolveExecutorUser(USER, needs);
/** In a namespace of their own the Worker is out of sight (ESRCH, ENOENT); else the kernel refuses. */
const hidden = resolvePidNamespace(true, true).kind === 'on';

describe.skipIf(!isRoot)('executors run as their own user (executor.user)', () => {
  let cluster: TestCluster | undefined;
  let client: BlockxClient | undefined;

  beforeAll(async () => {
    if (decision.kind !== 'drop') return;
    cluster = await startCluster({
      workers: 1,
      functionsDir,
      storageUrl: `sqlite:${storageFile}`,
      configPatch: (doc) => {
        const deployments = doc['deployments'] as Record<string, { executor?: Record<string, unknown> }>;
        for (const d of Object.values(deployments))
          d.executor = { ...d.executor, user: USER, maxProcesses: MAX_PROCESSES, memoryMaxMb: MEMORY_MAX_MB };
      },
    });
    client = new BlockxClient({ coordinator: cluster.coordinatorAddr });
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const run = (fn: string, args: unknown[]) =>
    client!.run({
      functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList: [args] } },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    });

  it.each(['probe', 'probe_py'])(
    '%s cannot read the storage, key or environ files, signal its Worker, or fork past the limit',
    async (fn) => {
      if (decision.kind !== 'drop') {
        // This checkout is out of the user's reach: a named user is refused, never replaced by root.
        expect(decision).toMatchObject({
          kind: 'error',
          message: expect.stringMatching(/cannot (enter|read) \//),
        });
        return;
      }
      const r = await run(fn, [[storageFile, keyFile], MAX_PROCESSES + 50, cluster!.workers[0]!.child.pid]);
      expect(r.state, r.failureMessage).toBe('SUCCEEDED');
      const seen = (r.pluginResults[0]?.result as Record<string, unknown>[])[0]!;
      expect(seen).toMatchObject({
        uid: 64123,
        gid: 64123,
        signalWorker: hidden ? 'ESRCH' : 'EPERM',
        workerEnviron: hidden ? 'ENOENT' : 'EACCES',
      });
      // Python: the router that forked it runs as the same user; the seccomp filter refuses the signal. In
      // a PID namespace of its own the router has no pid; its parent there is the namespace's init, which
      // a signal from inside does not reach (the kernel drops it: kill says ok).
      if (fn === 'probe_py') expect(seen.signalRouter).toBe(seen.ownNamespace ? 'ok' : 'EPERM');
      // The storage file the Worker created is 0600; the key file was made 0600 by its owner.
      expect(seen[storageFile]).toBe('EACCES');
      expect(seen[keyFile]).toBe('EACCES');
      // RLIMIT_NPROC: the shell's forks fail once the user's processes and threads reach the limit.
      expect(String(seen.stormStderr)).toMatch(/Resource temporarily unavailable|[Cc]an.?t fork|Cannot fork/);
      // As PID 1 of its namespace the JS Executor inherits the storm's orphans and Node leaves them zombies,
      // which count against the limit: past a quarter of it the Executor restarts, and they end with it.
      if (hidden)
        await eventually(() => zombiesOf(64123) === 0, {
          timeoutMs: 20_000,
          message: "the storm's zombies gone",
        });
      expect((await run('hello', [])).state).toBe('SUCCEEDED');
    },
    60_000,
  );

  it.skipIf(ceiling.kind !== 'ok')(
    `an allocation past executor.memoryMaxMb ends in its own Executor; a plain task runs after it${ceiling.kind === 'ok' ? '' : ` (skipped: ${ceiling.reason})`}`,
    async () => {
      if (decision.kind !== 'drop') return;
      const py = await run('hog_py', [4 * MEMORY_MAX_MB]);
      expect(py.state).toBe('FAILED');
      expect(py.failureMessage).toMatch(/EXECUTOR_MEMORY_LIMIT|memory ceiling/);
      const js = await run('hog', [4 * MEMORY_MAX_MB]);
      expect(js.state).toBe('FAILED');
      expect((await run('hello', [])).state).toBe('SUCCEEDED');
    },
    120_000,
  );
});

// An Executor as PID 1 of its own PID namespace, with the real kernel (docs/security.md § An Executor as
// PID 1 of its own PID namespace): a function's child process sends its Executor SIGKILL, SIGSTOP and
// every other signal, finding it as a function would (its parent pid); the Executor neither dies nor
// stops, the call ends with its own outcome and the next call runs on the same Executor. Without the
// namespace the same call ends the JS Executor (the control: the attack is real). The Worker's side keeps
// its control: the supervisor names the Executor by its pid here, its kill ends the whole namespace (a
// process the function left behind too), stop() ends it in order, the kernel's kill at the memory ceiling
// is still told apart, the JS executor restarts at its zombie limit, and the Python router reaps what a
// function's children leave behind. Needs root and util-linux unshare/setpriv; skipped with the reason
// elsewhere.
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { pythonExecutorCommand } from '../../../src/executor/python-command.js';
import { openExecutorCgroup } from '../../../src/services/call-host/adapters/executor-cgroup.js';
import { packagePath } from '../../../src/kernel/package-root.js';
import { eventually, present } from '../../support/eventually.js';
import { zombiesOf } from '../../support/processes.js';
import { pidNamespaceReach } from '../../support/pid-namespace-reach.js';
import { orphanLimit } from '../../../src/services/call-host/adapters/executor-supervisor.js';
import { ExecutorHarness, type HarnessOptions } from './executor-harness.js';
import { SnapshotEpochs } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** A user no other process runs as. */
const RUN_AS = { name: '64131:64131', uid: 64131, gid: 64131 };
const { decision, why } = pidNamespaceReach(RUN_AS.name, [
  packagePath('bin', 'blockx.js'),
  packagePath('dist'),
  packagePath('node_modules'),
]);
const skipped = why === '' ? '' : ` (skipped: ${why})`;

/** A shell script run by the function's child: every signal, then SIGKILL and SIGSTOP, at `$target`. */
const SIGNALS =
  'for s in $(seq 1 64); do kill -$s $target 2>/dev/null; done; kill -KILL $target; k=$?; kill -STOP $target; echo "$k $?"';
/** Whether this host lets the supervisor make the executor's memory cgroup (then it is checked too). */
const probe = openExecutorCgroup('probe', 512);
if (probe.kind === 'ok') probe.cgroup.remove();
/** A process the function leaves behind, found by its unique argument. */
const LINGER_ARG = String(3000 + (process.pid % 1000));

const dir = mkdtempSync(join(tmpdir(), 'bx-pidns-'));
chmodSync(dir, 0o755);
writeFileSync(
  join(dir, 'attack.mjs'),
  `import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
// The Executor as a function's child finds it: its parent, from /proc.
export default async () => {
  const r = spawnSync('bash', ['-c', 'target=$(cut -d" " -f4 /proc/$$/stat); ${SIGNALS}'], { encoding: 'utf8' });
  return { out: r.stdout.trim(), stat: readFileSync('/proc/1/stat', 'utf8').split(' ')[2] };
};
`,
);
writeFileSync(
  join(dir, 'linger.mjs'),
  `import { spawn } from 'node:child_process';
export default async () => { spawn('sleep', ['${LINGER_ARG}'], { detached: true, stdio: 'ignore' }).unref(); return 'left'; };
`,
);
writeFileSync(join(dir, 'hello.mjs'), 'export default async () => "hello";\n');
writeFileSync(
  join(dir, 'hog.mjs'),
  'export default async (ctx, mb) => Buffer.alloc(mb * 1024 * 1024, 1).length;\n',
);
// Each shell exits at once, orphaning its sleep to the executor, which exits 0.2 s later.
writeFileSync(
  join(dir, 'orphans.mjs'),
  `import { spawnSync } from 'node:child_process';
export default async (ctx, n) => { for (let i = 0; i < n; i++) spawnSync('sh', ['-c', 'sleep 0.2 &']); return n; };
`,
);
writeFileSync(
  join(dir, 'attack_py.py'),
  `import os
import subprocess


def main(ctx):
    # Its parent: the init of its own PID namespace (own_pidns.py), PID 1 there, as the router is in the
    # Executor's namespace; with BLOCKX_PYTHON_PROCESS_PIDNS=off, the router itself.
    router = os.getppid()
    r = subprocess.run(["bash", "-c", 'target=%d; ${SIGNALS}' % router], capture_output=True, text=True)
    return {"router": router, "out": r.stdout.strip()}
`,
);
writeFileSync(
  join(dir, 'orphans_py.py'),
  `import os
import subprocess


def zombies():
    n = 0
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % pid) as fh:
                n += fh.read().rsplit(")", 1)[1].split()[0] == "Z"
        except (OSError, IndexError):
            pass
    return n


def main(ctx, leave):
    # Each shell exits at once; its sleep is orphaned to its namespace's init (the router where the
    # execution process shares its namespace) and exits 0.1 s later.
    for _ in range(leave):
        subprocess.run(["sh", "-c", "sleep 0.1 &"])
    return zombies()
`,
);
writeFileSync(join(dir, 'hello_py.py'), 'def main(ctx):\n    return "hello"\n');
const epochs = new SnapshotEpochs();
const epoch = epochs.take(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The processes here whose command line holds `arg`. */
function processesWith(arg: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(arg);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const field = (pid: number, i: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[i]!;
};
/** The state letter of `pid` (R, S, T for stopped, Z). */
const stateOf = (pid: number): string => field(pid, 0);
const parentOf = (pid: number): number => Number(field(pid, 1));
/** The pids of `pid` in each namespace, outermost first (NSpid). */
const nsPids = (pid: number): string[] =>
  /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!.split(/\s+/);

async function started(
  make: (o: HarnessOptions) => ExecutorHarness,
  ns: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ExecutorHarness> {
  const h = make({
    env,
    functionsDir: dir,
    epochs,
    threads: 1,
    runAs: RUN_AS,
    memoryMaxMb: probe.kind === 'ok' ? 512 : 0,
    ...(ns && decision.kind === 'on' ? { pidNamespace: decision.tools } : {}),
  });
  chmodSync(h.dir, 0o711); // the Executor's user reaches its socket (the file is handed to it)
  return h.start();
}
const js = (o: HarnessOptions) => new ExecutorHarness(o);
// The system's interpreter: one found through root's PATH (a pyenv shim under /root) is out of the user's reach.
const python = (o: HarnessOptions) =>
  new ExecutorHarness({
    ...o,
    command: pythonExecutorCommand(existsSync('/usr/bin/python3') ? { python: '/usr/bin/python3' } : {}),
  });

describe.skipIf(why !== '')(`an executor as PID 1 of its own PID namespace${skipped}`, () => {
  it('JS: a child sending SIGKILL, SIGSTOP and every signal to its executor does nothing to it', async () => {
    const h = await started(js, true);
    try {
      const pid = h.supervisor.pid!;
      expect(nsPids(pid)).toEqual([String(pid), '1']);
      // In its cgroup (where there is one): moved there by pid, or born there as unshare's child.
      if (probe.kind === 'ok')
        expect(readFileSync(`/proc/${pid}/cgroup`, 'utf8')).toMatch(/blockx-executor-\d+-\d+-js/);
      const r = await h.run({ function: 'attack', codeEpoch: epoch });
      expect(r).toMatchObject({ type: 'callCompleted' });
      // kill(1) from inside succeeds and is dropped by the kernel: exit codes 0 0.
      expect((r as { value: { out: string } }).value.out).toBe('0 0');
      expect(stateOf(pid)).not.toBe('T');
      const after = await h.run({ function: 'hello', codeEpoch: epoch });
      expect(after).toMatchObject({ type: 'callCompleted', value: 'hello' });
      expect(h.supervisor.pid).toBe(pid);
      expect(h.count('executorLost')).toBe(0);
      const ready = h.events.find((e) => e.type === 'executorReady');
      expect(ready).toMatchObject({ pid });
    } finally {
      await h.stop();
    }
  });

  it('JS without the namespace (the control): the same call ends its executor', async () => {
    const h = await started(js, false);
    try {
      const pid = h.supervisor.pid!;
      const r = await h.run({ function: 'attack', codeEpoch: epoch });
      expect(r).toMatchObject({ type: 'callFailed', kind: 'executor_crash', retryable: true });
      await eventually(() => h.supervisor.pid !== undefined && h.supervisor.pid !== pid, {
        timeoutMs: 20_000,
      });
    } finally {
      await h.stop();
    }
  });

  it("the supervisor's kill ends the namespace: the executor and what its function left behind", async () => {
    const h = await started(js, true);
    try {
      const pid = h.supervisor.pid!;
      expect(await h.run({ function: 'linger', codeEpoch: epoch })).toMatchObject({ value: 'left' });
      const lingering = await eventually(() => {
        const found = processesWith(LINGER_ARG);
        expect(found).toHaveLength(1);
        return found[0]!;
      });
      expect(nsPids(lingering).length).toBe(2);
      // The supervisor's child is unshare, the executor's parent: SIGKILL it as the watchdog would.
      process.kill(parentOf(pid), 'SIGKILL');
      await eventually(
        () => processesWith(LINGER_ARG).length === 0 && !readdirSync('/proc').includes(String(pid)),
        {
          message: 'the namespace gone',
        },
      );
      await h.supervisor.whenReady();
      await eventually(() => h.supervisor.pid !== undefined && h.supervisor.pid !== pid);
      expect(await h.run({ function: 'hello', codeEpoch: epoch })).toMatchObject({ value: 'hello' });
      // stop(): the executor ends on its socket closing, in order (not killed), and its namespace with it.
      expect(await h.run({ function: 'linger', codeEpoch: epoch })).toMatchObject({ value: 'left' });
      const second = h.supervisor.pid!;
      await h.stop();
      expect(readdirSync('/proc')).not.toContain(String(second));
      expect(processesWith(LINGER_ARG)).toEqual([]);
      expect(h.logs.join('\n')).toMatch(/stopped: connection closed/);
    } finally {
      await h.stop();
    }
  });

  it('JS: the zombies its functions leave behind restart the executor at the limit, ending them', async () => {
    const maxProcesses = 64;
    const lines: string[] = [];
    const h = await started((o) => js({ ...o, maxProcesses, log: (_l, m) => lines.push(m) }), true);
    try {
      const pid = h.supervisor.pid!;
      const limit = orphanLimit(maxProcesses);
      // Below the limit Node keeps them (it waits only for the children it started) and serves on.
      await h.run({ function: 'orphans', codeEpoch: epoch, args: [limit - 4] });
      await eventually(() => zombiesOf(RUN_AS.uid) === limit - 4, { message: 'the zombies held' });
      expect(h.supervisor.pid).toBe(pid);
      await h.run({ function: 'orphans', codeEpoch: epoch, args: [8] });
      const line = await eventually(() => present(lines.find((l) => l.includes('restarts:'))), {
        timeoutMs: 10_000,
      });
      expect(line).toMatch(new RegExp(`executor ${pid} restarts: it holds \\d+ exited processes`));
      await eventually(() => zombiesOf(RUN_AS.uid) === 0 && h.supervisor.pid !== pid, { timeoutMs: 10_000 });
      await h.supervisor.whenReady();
      expect(await h.run({ function: 'hello', codeEpoch: epoch })).toMatchObject({ value: 'hello' });
    } finally {
      await h.stop();
    }
  });

  it.skipIf(probe.kind !== 'ok')(
    'JS: the kernel ending it at its memory ceiling is still told apart, by its pid here',
    async () => {
      const lines: string[] = [];
      const h = await started(
        (o) => js({ ...o, threadMemoryMb: 0, maxRssMb: 0, memoryMaxMb: 160, log: (_l, m) => lines.push(m) }),
        true,
      );
      try {
        const pid = h.supervisor.pid!;
        const big = await h.run({ function: 'hog', codeEpoch: epoch, args: [640] });
        expect(big).toMatchObject({ type: 'callFailed', kind: 'executor_crash', retryable: true });
        const line = await eventually(() => present(lines.find((l) => l.includes('the kernel ended it'))), {
          timeoutMs: 20_000,
        });
        // unshare reports its child's SIGKILL as code 1: the cgroup's OOM count tells; the child is named.
        expect(line).toMatch(
          new RegExp(`executor process ${pid} exited \\(SIGKILL\\): .*executor.memoryMaxMb 160 MiB`),
        );
        await h.supervisor.whenReady();
        expect(await h.run({ function: 'hello', codeEpoch: epoch })).toMatchObject({ value: 'hello' });
      } finally {
        await h.stop();
      }
    },
  );

  it.each([
    { mode: 'each execution process in a namespace of its own', env: process.env },
    { mode: 'BLOCKX_PYTHON_PROCESS_PIDNS=off', env: { ...process.env, BLOCKX_PYTHON_PROCESS_PIDNS: 'off' } },
  ])(
    'Python ($mode): a child signalling its parent does nothing to the router; orphans are reaped',
    async ({ env }) => {
      const h = await started(python, true, env);
      try {
        const pid = h.supervisor.pid!;
        expect(nsPids(pid)).toEqual([String(pid), '1']);
        const r = await h.run({ function: 'attack_py', codeEpoch: epoch });
        expect(r).toMatchObject({ type: 'callCompleted', value: { router: 1 } });
        expect(stateOf(pid)).not.toBe('T');
        expect(await h.run({ function: 'hello_py', codeEpoch: epoch })).toMatchObject({ value: 'hello' });
        expect(h.supervisor.pid).toBe(pid);
        expect(h.count('executorLost')).toBe(0);
        // 20 orphans: each becomes the router's when its shell exits, and is reaped when it ends.
        await h.run({ function: 'orphans_py', codeEpoch: epoch, args: [20] });
        await eventually(
          async () => {
            const n = await h.run({ function: 'orphans_py', codeEpoch: epoch, args: [0] });
            expect(n).toMatchObject({ type: 'callCompleted', value: 0 });
          },
          { timeoutMs: 10_000, intervalMs: 200, message: 'no zombie left in the namespace' },
        );
      } finally {
        await h.stop();
      }
    },
  );
});

// A Python function cannot signal a sibling execution process (blockx_executor/own_pidns.py,
// docs/security.md § Execution processes in PID namespaces of their own), with the real kernel. alice's
// function finds every other process below the router as a function could (/proc, by parent) and sends
// each every signal 1-64, then SIGKILL and SIGSTOP; bob's call, running on the other execution process at
// that moment, completes, and the executor serves on. The control, BLOCKX_PYTHON_PROCESS_PIDNS=off, shows
// the attack is real: bob's call fails executor_crash. Two shapes: the executor as this process's child
// (root here: a PID namespace per process without a user namespace), and as an unprivileged user in the
// Executor's own PID namespace as the Worker starts it (a user namespace per process too, which also keeps
// a sibling's /proc/PID/mem shut), in and out of that namespace; and where unshare is refused (one
// warning, then as before). Also: --thread-memory-mb still bounds the execution process (not its
// namespace's init), and the pure parts of own_pidns.py as tables. Linux only; the second shape needs root
// and util-linux (skipped with the reason).
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { pythonExecutorCommand } from '../../../src/executor/python-command.js';
import { packagePath } from '../../../src/kernel/package-root.js';
import { pidNamespaceReach } from '../../support/pid-namespace-reach.js';
import { ExecutorHarness, type HarnessOptions, type Terminal } from './executor-harness.js';
import { SnapshotEpochs } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** A user no other process runs as. */
const RUN_AS = { name: '64132:64132', uid: 64132, gid: 64132 };
const linux = process.platform === 'linux';
const root = process.getuid?.() === 0;
const reach = pidNamespaceReach(RUN_AS.name, [packagePath('src', 'executor', 'python')]);
const decision = reach.decision;
const whyNot = linux ? reach.why : 'not Linux';

/** Whether the host's Yama restricts ptrace (then /proc/PID/mem is shut between siblings either way). */
const yamaRestricts =
  existsSync('/proc/sys/kernel/yama/ptrace_scope') &&
  readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim() !== '0';

const dir = mkdtempSync(join(tmpdir(), 'bx-py-siblings-'));
chmodSync(dir, 0o755);
writeFileSync(
  join(dir, 'attack.py'),
  `import errno
import os
import signal


def below(router):
    """Every process below \`router\` (0: every process /proc shows), by the parents /proc names."""
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    if router == 0:
        return [p for ps in kids.values() for p in ps]
    out, todo = [], [router]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def count(answers, fn):
    try:
        fn()
        r = "ok"
    except OSError as err:
        r = errno.errorcode.get(err.errno, str(err))
    answers[r] = answers.get(r, 0) + 1


def main(ctx, router):
    me = int(os.readlink("/proc/self"))
    # Itself, its parent and the router are not the targets (a number that names itself or its init in
    # a namespace of its own is skipped: a kill there would reach itself only).
    skip = {me, router, 1, os.getpid(), os.getppid()}
    targets = sorted(p for p in below(router) if p not in skip)
    kills, mem = {}, {}
    for p in targets:
        count(mem, lambda: open("/proc/%d/mem" % p, "r+b").close())
    for p in targets:
        for s in list(range(1, 65)) + [signal.SIGKILL, signal.SIGSTOP]:
            count(kills, lambda: os.kill(p, s))
    # The router's memory: /proc/1 in the Executor's namespace (router 0), else the router's pid.
    router_mem = {}
    count(router_mem, lambda: open("/proc/%d/mem" % (router or 1), "r+b").close())
    return {"targets": len(targets), "kill": kills, "mem": mem, "routerMem": router_mem}
`,
);
writeFileSync(
  join(dir, 'slow.py'),
  'import time\n\n\ndef main(ctx, s):\n    time.sleep(s)\n    return "bob"\n',
);
// Holds `mb` MiB (touched) for `s` seconds: long enough for the router's heartbeat to see it.
writeFileSync(
  join(dir, 'hold.py'),
  'import time\n\n\ndef main(ctx, mb, s):\n    held = b"x" * (mb * 1024 * 1024)\n    time.sleep(s)\n    return len(held)\n',
);
writeFileSync(join(dir, 'hello.py'), 'def main(ctx):\n    return "hello"\n');
// Starts the executor with unshare(2) refused (a seccomp filter answering EPERM), as on a host without
// user namespaces or in a container that forbids them.
const NO_UNSHARE = join(dir, 'no-unshare.py.txt');
writeFileSync(
  NO_UNSHARE,
  `import ctypes, os, platform, struct, sys
arch, nr = {"x86_64": (0xC000003E, 272), "aarch64": (0xC00000B7, 97)}[platform.machine()]
prog = [(0x20, 0, 0, 4), (0x15, 0, 3, arch), (0x20, 0, 0, 0), (0x15, 0, 1, nr),
        (0x06, 0, 0, 0x00050001), (0x06, 0, 0, 0x7FFF0000)]
buf = b"".join(struct.pack("HBBI", *i) for i in prog)
fil = ctypes.create_string_buffer(buf)
fprog = struct.pack("HxxxxxxP", len(prog), ctypes.addressof(fil))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.create_string_buffer(fprog), 0, 0) == 0
os.execv(sys.executable, [sys.executable, "-B"] + sys.argv[1:])
`,
);
const epochs = new SnapshotEpochs();
const epoch = epochs.take(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Attack {
  readonly targets: number;
  readonly kill: Record<string, number>;
  readonly mem: Record<string, number>;
  readonly routerMem: Record<string, number>;
}

/** bob's call on one process, alice's attack on the other while it runs; both terminals. */
async function attackWhileBobRuns(
  h: ExecutorHarness,
  router: number,
): Promise<{ bob: Terminal; alice: Terminal }> {
  const bob = h.run({ function: 'slow', codeEpoch: epoch, args: [2], tenant: 'bob', taskId: 'bob-1' });
  await h.until(() => h.events.some((e) => e.type === 'callStarted'));
  const alice = await h.run({
    function: 'attack',
    codeEpoch: epoch,
    args: [router],
    tenant: 'alice',
    taskId: 'alice-1',
  });
  return { bob: await bob, alice };
}

const python = (o: HarnessOptions, off: boolean) =>
  new ExecutorHarness({
    threads: 2,
    isolation: 'task',
    ...o,
    env: { ...process.env, ...(off ? { BLOCKX_PYTHON_PROCESS_PIDNS: 'off' } : {}) },
    command: pythonExecutorCommand(existsSync('/usr/bin/python3') ? { python: '/usr/bin/python3' } : {}),
  });

describe.skipIf(!linux)(
  'python execution processes: a sibling is out of reach (the executor as a child)',
  () => {
    it('in PID namespaces of their own: every signal finds nothing, and bob completes', async () => {
      const h = await python({ functionsDir: dir, epochs }, false).start();
      try {
        const { bob, alice } = await attackWhileBobRuns(h, h.supervisor.pid!);
        expect(alice).toMatchObject({ type: 'callCompleted' });
        const a = (alice as { value: Attack }).value;
        expect(a.targets).toBeGreaterThanOrEqual(2); // the other process and its namespace's init
        expect(a.kill).toEqual({ ESRCH: a.targets * 66 });
        // Not a user namespace as root: a root execution process keeps CAP_SYS_PTRACE, and a sibling's
        // memory stays open to it (docs/security.md: an Executor run as root is trusted with root).
        if (root) expect(a.mem.ok).toBeGreaterThan(0);
        expect(bob).toMatchObject({ type: 'callCompleted', value: 'bob' });
        expect(h.logs.join('\n')).not.toContain('replacing it');
        expect(await h.run({ function: 'hello', codeEpoch: epoch, tenant: 'bob' })).toMatchObject({
          value: 'hello',
        });
      } finally {
        await h.stop();
      }
    });

    it("control, BLOCKX_PYTHON_PROCESS_PIDNS=off: the same call ends bob's process, and bob's call fails", async () => {
      const h = await python({ functionsDir: dir, epochs }, true).start();
      try {
        const { bob, alice } = await attackWhileBobRuns(h, h.supervisor.pid!);
        expect(alice).toMatchObject({ type: 'callCompleted' });
        expect((alice as { value: Attack }).value.kill.ok).toBeGreaterThan(0);
        expect(bob).toMatchObject({ type: 'callFailed', kind: 'executor_crash', retryable: true });
      } finally {
        await h.stop();
      }
    });
  },
);

describe.skipIf(whyNot !== '')(
  `python execution processes as an unprivileged user in the Executor's PID namespace${whyNot ? ` (skipped: ${whyNot})` : ''}`,
  () => {
    const started = (off: boolean, ns = true) => {
      const h = python(
        {
          functionsDir: dir,
          epochs,
          runAs: RUN_AS,
          ...(ns && decision.kind === 'on' ? { pidNamespace: decision.tools } : {}),
        },
        off,
      );
      chmodSync(h.dir, 0o711); // the Executor's user reaches its socket (the file is handed to it)
      return h.start();
    };

    it('a user namespace each: signals find nothing, /proc/PID/mem is shut, bob completes', async () => {
      const h = await started(false);
      try {
        // In the Executor's namespace its /proc shows only the executor's processes: every one is a target.
        const { bob, alice } = await attackWhileBobRuns(h, 0);
        expect(alice).toMatchObject({ type: 'callCompleted' });
        const a = (alice as { value: Attack }).value;
        expect(a.targets).toBeGreaterThanOrEqual(2);
        expect(a.kill).toEqual({ ESRCH: a.targets * 66 });
        expect(a.mem.ok ?? 0).toBe(0);
        // The router's memory is shut too (it is not dumpable, and in the parent user namespace).
        expect(a.routerMem.ok ?? 0).toBe(0);
        expect(bob).toMatchObject({ type: 'callCompleted', value: 'bob' });
        expect(h.logs.join('\n')).not.toContain('without a PID namespace of their own');
      } finally {
        await h.stop();
      }
    });

    it("without the Executor's namespace (the router a subreaper, not PID 1): the same", async () => {
      const h = await started(false, false);
      try {
        const { bob, alice } = await attackWhileBobRuns(h, h.supervisor.pid!);
        const a = (alice as { value: Attack }).value;
        expect(a.targets).toBeGreaterThanOrEqual(2);
        expect(a.kill).toEqual({ ESRCH: a.targets * 66 });
        expect(a.mem.ok ?? 0).toBe(0);
        expect(bob).toMatchObject({ type: 'callCompleted', value: 'bob' });
      } finally {
        await h.stop();
      }
    });

    it("control, BLOCKX_PYTHON_PROCESS_PIDNS=off: bob's call fails executor_crash", async () => {
      const h = await started(true);
      try {
        const { bob, alice } = await attackWhileBobRuns(h, 0);
        const a = (alice as { value: Attack }).value;
        expect(a.kill.ok).toBeGreaterThan(0);
        // Same user, same namespace: a sibling's memory is open too where Yama does not restrict ptrace;
        // the router's is not (it is not dumpable).
        if (!yamaRestricts) expect(a.mem.ok).toBeGreaterThan(0);
        expect(a.routerMem.ok ?? 0).toBe(0);
        expect(bob).toMatchObject({ type: 'callFailed', kind: 'executor_crash', retryable: true });
      } finally {
        await h.stop();
      }
    });
  },
);

describe.skipIf(!linux || !['x64', 'arm64'].includes(process.arch))(
  'python execution processes where the kernel refuses the namespace',
  () => {
    it("one warning, then they share the router's namespace and serve as before", async () => {
      const [py, , script] = pythonExecutorCommand(
        existsSync('/usr/bin/python3') ? { python: '/usr/bin/python3' } : {},
      );
      const h = await new ExecutorHarness({
        functionsDir: dir,
        epochs,
        threads: 2,
        isolation: 'task',
        command: [py!, '-B', NO_UNSHARE, script!],
      }).start();
      try {
        const { bob, alice } = await attackWhileBobRuns(h, h.supervisor.pid!);
        const warnings = h.logs.filter((l) => l.includes('without a PID namespace of their own'));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toContain('unshare(');
        expect(warnings[0]).toContain('Operation not permitted');
        // As before the change: the attack reaches bob's process.
        expect((alice as { value: Attack }).value.kill.ok).toBeGreaterThan(0);
        expect(bob).toMatchObject({ type: 'callFailed', kind: 'executor_crash' });
        expect(await h.run({ function: 'hello', codeEpoch: epoch })).toMatchObject({ value: 'hello' });
        expect(h.logs.filter((l) => l.includes('without a PID namespace of their own'))).toHaveLength(1);
      } finally {
        await h.stop();
      }
    });
  },
);

describe.skipIf(!linux)(
  'python execution processes: --thread-memory-mb reads the process, not its init',
  () => {
    it.each([
      { mode: 'in a PID namespace of its own', off: false },
      { mode: 'BLOCKX_PYTHON_PROCESS_PIDNS=off', off: true },
    ])(
      '$mode: a call holding 3x the bound fails EXECUTOR_MEMORY_LIMIT; a small one completes',
      async ({ off }) => {
        const h = await python({ functionsDir: dir, epochs, threads: 1, threadMemoryMb: 100 }, off).start();
        try {
          expect(await h.run({ function: 'hold', codeEpoch: epoch, args: [8, 0] })).toMatchObject({
            type: 'callCompleted',
            value: 8 * 1024 * 1024,
          });
          expect(await h.run({ function: 'hold', codeEpoch: epoch, args: [300, 3] })).toMatchObject({
            type: 'callFailed',
            kind: 'executor_crash',
            code: 'EXECUTOR_MEMORY_LIMIT',
            message: expect.stringMatching(/RSS \d+ MiB is over --thread-memory-mb 100/),
          });
          expect(await h.run({ function: 'hello', codeEpoch: epoch })).toMatchObject({ value: 'hello' });
        } finally {
          await h.stop();
        }
      },
    );
  },
);

// The pure parts of own_pidns.py, in the interpreter the executor runs on: every exit code and signal an
// execution process can end with, through its init's exit code, back to what the router reads.
describe('own_pidns: the status an init passes on, and when it is on', () => {
  const run = (code: string): unknown => {
    const [py, , script] = pythonExecutorCommand();
    const r = spawnSync(py!, ['-B', '-c', code], {
      cwd: dirname(script!),
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as unknown;
  };

  it('every exit code 0-128 and every signal 1-64 reads back as itself', () => {
    const out = run(`
import json
from blockx_executor.own_pidns import ended_by_signal, exit_code_of
rows = []
for c in range(0, 256):
    init = exit_code_of(c << 8) << 8
    rows.append(["exit", c, ended_by_signal(init, True), ended_by_signal(c << 8, False)])
for s in range(1, 65):
    init = exit_code_of(s) << 8
    rows.append(["signal", s, ended_by_signal(init, True), ended_by_signal(s, False)])
print(json.dumps(rows))
`) as [string, number, number | null, number | null][];
    expect(out).toHaveLength(256 + 64);
    for (const [kind, n, nested, plain] of out) {
      if (kind === 'signal') {
        expect([n, nested, plain]).toEqual([n, n, n]);
      } else {
        // An execution process that exits 129-192 itself reads as signal n - 128 (documented): only its
        // own calls fail, and only an OOM count that rose names the memory ceiling.
        expect([n, nested, plain]).toEqual([n, n > 128 && n < 193 ? n - 128 : null, null]);
      }
    }
  });

  it('flags: a user namespace unless root; BLOCKX_PYTHON_PROCESS_PIDNS off turns it off', () => {
    const out = run(`
import json
from blockx_executor.own_pidns import CLONE_NEWPID, CLONE_NEWUSER, flags_for
cases = [(0, {}), (1000, {}), (65534, {"BLOCKX_PYTHON_PROCESS_PIDNS": ""}), (1000, {"BLOCKX_PYTHON_PROCESS_PIDNS": "off"}),
         (0, {"BLOCKX_PYTHON_PROCESS_PIDNS": " OFF "}), (1000, {"BLOCKX_PYTHON_PROCESS_PIDNS": "0"}),
         (1000, {"BLOCKX_PYTHON_PROCESS_PIDNS": "on"})]
names = {0: "none", CLONE_NEWPID: "pid", CLONE_NEWPID | CLONE_NEWUSER: "user+pid"}
print(json.dumps([names[flags_for(uid, env)] for uid, env in cases]))
`);
    expect(out).toEqual(['pid', 'user+pid', 'user+pid', 'none', 'none', 'none', 'user+pid']);
  });

  it("the helper's report: a refusal turns the namespaces off, a resource at its limit fails one fork", () => {
    const out = run(`
import json
from blockx_executor.own_pidns import read_report
reports = [b"+4242", b"!1 unshare(CLONE_NEWUSER|CLONE_NEWPID) failed: Operation not permitted",
           b"!22 unshare(CLONE_NEWPID) failed: Invalid argument", b"!13 writing /proc/self/uid_map failed: x",
           b"!28 unshare(CLONE_NEWUSER|CLONE_NEWPID) failed: No space left on device", b"!12 no memory", b"", b"+", b"+12x"]
print(json.dumps([list(read_report(r)) for r in reports]))
`);
    const lost = ['failed', 11, 'the helper that makes it ended before it reported'];
    expect(out).toEqual([
      ['pid', 4242],
      ['refused', 'unshare(CLONE_NEWUSER|CLONE_NEWPID) failed: Operation not permitted'],
      ['refused', 'unshare(CLONE_NEWPID) failed: Invalid argument'],
      ['refused', 'writing /proc/self/uid_map failed: x'],
      ['failed', 28, 'unshare(CLONE_NEWUSER|CLONE_NEWPID) failed: No space left on device'],
      ['failed', 12, 'no memory'],
      lost,
      lost,
      lost,
    ]);
  });

  it("the seccomp filter without the router's pid refuses 0 and -1 only", () => {
    const out = run(`
import json
from blockx_executor.no_signals import program
def targets(p):
    return sorted(k for code, jt, jf, k in p if code == 0x15 and jt != jf and k not in (62, 200, 234, 424, 101, 311, 0xC000003E))
print(json.dumps([targets(program("x86_64", None, None)), targets(program("x86_64", 4242, 4240))]))
`);
    expect(out).toEqual([
      [0, 0xffffffff],
      [0, 4242, 2 ** 32 - 4240, 0xffffffff],
    ]);
  });
});

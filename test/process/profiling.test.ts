// Process-level tests of whole-lifetime profiling (docs/performance.md § Profiling): the built CLI with
// COORDINATOR_* / WORKER_* / EXECUTOR_* _CPU_PROFILE and _TRACE set, stopped with SIGTERM, leaves a
// `.cpuprofile` with samples and a trace-events JSON with events; a path that cannot be written is one
// line on stderr and exit code 2. (`blockx coordinator` alone needs etcd: test/e2e/profiling.test.ts;
// here the Coordinator is profiled under `blockx up`, which runs it.)
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO, cleanEnv, runBlockx } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { expectCpuProfile, expectTrace } from '../support/profile-files.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-profiling-'));
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const child of children) await stopGroup(child, 'SIGKILL', 1_000);
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `blockx ARGS` (tracked, own process group) and waits for `ready` on its output. */
async function serve(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawnTracked(process.execPath, [BIN, ...args], { cwd: REPO, env: cleanEnv(env) });
  children.add(child);
  const tail = captureOutput(child);
  await waitForLine(child, ready, 45_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${tail.text()}`);
  });
  return { child, output: () => tail.text() };
}

/** SIGTERM to the command alone (as an operator's kill); resolves with its exit code. */
function terminate(child: ChildProcess): Promise<number | string | null> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal));
    child.kill('SIGTERM');
  });
}

describe('profiling variables', () => {
  it('blockx worker: WORKER_* profile the worker, EXECUTOR_* its executor (file name gets the pid)', async () => {
    const out = path.join(dir, 'worker');
    mkdirSync(out);
    const { child, output } = await serve(
      ['worker', '--deployment', 'block'],
      {
        WORKER_LISTEN: '127.0.0.1:0',
        BLOCKX_STORAGE_URL: `sqlite:${path.join(out, 'db.sqlite')}`,
        WORKER_CPU_PROFILE: path.join(out, 'worker-%p.cpuprofile'),
        WORKER_TRACE: path.join(out, 'worker.trace.json'),
        EXECUTOR_CPU_PROFILE: path.join(out, 'executor.cpuprofile'),
        EXECUTOR_TRACE: path.join(out, 'executor-%p.json'),
      },
      /^worker listening on \S+/,
    );
    const addr = /^worker listening on (\S+)/m.exec(output())?.[1] ?? '';
    // Work for both processes: one task through the worker and its executor.
    const submit = await runBlockx(
      ['submit', 'examples/tasks/hello-world.json', '--worker', addr, '--wait'],
      {
        env: cleanEnv({ BLOCKX_STORAGE_URL: `sqlite:${path.join(out, 'db.sqlite')}` }),
      },
    );
    expect(submit.code, submit.stderr).toBe(0);
    expect(await terminate(child), output()).toBe(0);
    const pid = child.pid as number;

    expectCpuProfile(path.join(out, `worker-${pid}.cpuprofile`));
    expectTrace(path.join(out, 'worker.trace.json'), pid);
    // Its pid names it; as PID 1 of a namespace of its own (as root) with a random suffix: `1-<8 hex>`.
    const named = /^executor\.((\d+)(?:-[0-9a-f]{8})?)\.cpuprofile$/;
    const executorProfiles = readdirSync(out).filter((f) => named.test(f));
    expect(executorProfiles).toHaveLength(1);
    const [, executorId, executorPidText] = named.exec(executorProfiles[0] as string)!;
    const executorPid = Number(executorPidText);
    expect(executorPid).not.toBe(pid);
    if (executorPid === 1) expect(executorId).toMatch(/^1-[0-9a-f]{8}$/);
    const profile = expectCpuProfile(path.join(out, executorProfiles[0] as string));
    expect(profile.nodes.some((n) => n.callFrame.functionName !== '')).toBe(true);
    expectTrace(path.join(out, `executor-${executorId}.json`), executorPid);
  }, 90_000);

  it('blockx up: COORDINATOR_* profile its process, WORKER_* each Worker child (the file name gets its pid)', async () => {
    const out = path.join(dir, 'up');
    mkdirSync(out);
    const { child, output } = await serve(
      ['up', '--no-demo', '--no-dashboard', '--workers', '1', '--listen', `127.0.0.1:${await freePort()}`],
      {
        BLOCKX_STORAGE_URL: `sqlite:${path.join(out, 'db.sqlite')}`,
        COORDINATOR_CPU_PROFILE: path.join(out, 'up.cpuprofile'),
        COORDINATOR_TRACE: path.join(out, 'up.trace.json'),
        WORKER_CPU_PROFILE: path.join(out, 'worker.cpuprofile'),
      },
      /^serving; press Ctrl-C/,
    );
    expect(output()).not.toContain('does not apply');
    expect(await terminate(child), output()).toBe(0);
    expectCpuProfile(path.join(out, 'up.cpuprofile'));
    const trace = expectTrace(path.join(out, 'up.trace.json'), child.pid as number);
    expect(trace.traceEvents.some((e) => e.name === 'V8.GCScavenger' || e.name.startsWith('V8.'))).toBe(true);
    // The one Worker ran in a child process of its own, profiled into a file named by its pid.
    const workerProfiles = readdirSync(out).filter((f) => /^worker\.\d+\.cpuprofile$/.test(f));
    expect(workerProfiles, readdirSync(out).join(', ')).toHaveLength(1);
    expect(workerProfiles[0]).not.toBe(`worker.${child.pid}.cpuprofile`);
    expectCpuProfile(path.join(out, workerProfiles[0] as string));
    expect(existsSync(path.join(out, 'worker.cpuprofile'))).toBe(false);
  }, 90_000);

  it('blockx up with its Workers in its own process (a memory database): a WORKER_* variable is named as not applying', async () => {
    const out = path.join(dir, 'up-in-process');
    mkdirSync(out);
    const { child, output } = await serve(
      ['up', '--no-demo', '--no-dashboard', '--workers', '1', '--listen', `127.0.0.1:${await freePort()}`],
      { BLOCKX_STORAGE_URL: 'sqlite::memory:', WORKER_CPU_PROFILE: path.join(out, 'worker.cpuprofile') },
      /^serving; press Ctrl-C/,
    );
    expect(output()).toContain(
      'blockx up: WORKER_CPU_PROFILE does not apply (the workers run in this process); COORDINATOR_CPU_PROFILE profiles it',
    );
    expect(await terminate(child), output()).toBe(0);
    expect(readdirSync(out)).toEqual([]);
  }, 90_000);

  it.each([
    [['coordinator', '--deployment', 'block'], 'COORDINATOR_CPU_PROFILE', 'blockx coordinator'],
    [['coordinator', '--deployment', 'block'], 'COORDINATOR_TRACE', 'blockx coordinator'],
    [['up', '--no-demo'], 'COORDINATOR_TRACE', 'blockx up'],
    [['worker', '--deployment', 'block'], 'WORKER_CPU_PROFILE', 'blockx worker'],
    [['worker', '--deployment', 'block'], 'WORKER_TRACE', 'blockx worker'],
    [['executor', '--socket', '/tmp/never.sock'], 'EXECUTOR_CPU_PROFILE', 'blockx executor'],
    [['executor', '--socket', '/tmp/never.sock'], 'EXECUTOR_TRACE', 'blockx executor'],
  ])(
    '%j with %s in a missing folder: one line naming it, exit 2, nothing started',
    async (args, variable, label) => {
      const file = path.join(dir, 'no-such-folder', 'out.json');
      const r = await runBlockx(args, { env: cleanEnv({ [variable]: file, WORKER_LISTEN: '127.0.0.1:0' }) });
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^${label}: ${variable}=${dir}/no-such-folder/out(\\.\\d+)?\\.json: cannot write the file \\(ENOENT`,
        ),
      );
      expect(r.stdout).toBe('');
    },
  );
});

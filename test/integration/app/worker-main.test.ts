// Process-level tests of the Worker: spawn the worker entry (src/app/worker-main.ts under
// tsx; `blockx worker` runs the same workerCommand once the CLI wires it) and talk to it over real gRPC.
// Covers each status code of docs/task-lifecycle.md's table, a task timeout, result retention expiry,
// draining on SIGTERM, and hello_world end to end (functions run in the Executor child the Worker
// supervises, src/services/worker/app/executor-runtime.ts).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createWorkerClient, unaryCall } from '../../../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../../../src/grpc/convert.js';
import type { TaskUpdate } from '../../../src/grpc/domain-types.js';
import type { WorkerServiceClient } from '../../../src/grpc/proto.js';
import { businessCodeOf, statusCodeOf } from '../../../src/grpc/status.js';
import type {
  GetTaskResultResponseWireOut,
  RequestTaskSlotResponseWireOut,
  SubmitTaskResponseWireOut,
  TaskInputWire,
  TaskUpdateWireOut,
} from '../../../src/grpc/wire-types.js';
import { captureOutput, spawnTracked, stopGroup, waitForExit, waitForLine } from '../../support/processes.js';

// Spawns a real worker process: the timeouts of the process tier this file came from.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const REPO = path.resolve(import.meta.dirname, '../../..');
const ENTRY = path.join(REPO, 'src/app/worker-main.ts');
const CONFIG = path.join(REPO, 'blockx.config.yaml');

let functionsDir = '';
const children: ChildProcess[] = [];

beforeAll(() => {
  functionsDir = mkdtempSync(path.join(tmpdir(), 'blockx-worker-fn-'));
  writeFileSync(path.join(functionsDir, 'package.json'), '{"type":"module"}');
  copyFileSync(path.join(REPO, 'functions/hello_world.ts'), path.join(functionsDir, 'hello_world.ts'));
  writeFileSync(
    path.join(functionsDir, 'sleepy.mjs'),
    `export default (ctx, ms) => new Promise((resolve, reject) => {
  const t = setTimeout(() => resolve('slept ' + ms), ms);
  ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(ctx.signal.reason); });
});\n`,
  );
});

afterAll(async () => {
  await Promise.all(children.map((c) => stopGroup(c, 'SIGKILL', 1_000)));
  rmSync(functionsDir, { recursive: true, force: true });
});

interface WorkerProcess {
  readonly child: ChildProcess;
  readonly address: string;
  readonly client: WorkerServiceClient;
  output(): string;
}

/** Starts a worker on 127.0.0.1:0 and waits for its `worker listening on ADDR` line. */
async function startWorker(env: Record<string, string> = {}): Promise<WorkerProcess> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|TASK_DEADLINE_MS|MAX_TASK_TIMEOUT_MS|RESULT_RETENTION_MS|WATCH_DISCONNECT_GRACE_MS|CALL_DEADLINE_MS)/.test(
          k,
        ),
    ),
  );
  const child = spawnTracked(
    process.execPath,
    ['--import', 'tsx', ENTRY, '--deployment', 'block', '--config', CONFIG],
    {
      cwd: REPO,
      env: {
        ...clean,
        WORKER_LISTEN: '127.0.0.1:0',
        BLOCKX_FUNCTIONS_DIR: functionsDir,
        BLOCKX_LOG_LEVEL: 'warn',
        ...env,
      },
    },
  );
  children.push(child);
  const output = captureOutput(child);
  const line = await waitForLine(child, /^worker listening on \S+/, 30_000);
  const address = /^worker listening on (\S+)/.exec(line)?.[1] ?? '';
  return { child, address, client: createWorkerClient(address), output: () => output.text() };
}

function hello(taskId: string, extra: Partial<TaskInputWire> = {}): TaskInputWire {
  return {
    ...taskInputToWire({
      taskId,
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
      },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      taskTimeoutMs: 0,
    }),
    ...extra,
  };
}

function sleepy(taskId: string, ms: number, taskTimeoutMs = 0): TaskInputWire {
  return taskInputToWire({
    taskId,
    functionCallConfig: { type: 'CallListCallConfig', config: { function: 'sleepy', callList: [[ms]] } },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    taskTimeoutMs,
  });
}

const submit = (c: WorkerServiceClient, task: TaskInputWire, slotId = '') =>
  unaryCall<SubmitTaskResponseWireOut>((md, o, cb) => c.submitTask({ task, slotId }, md, o, cb), {
    timeoutMs: 5_000,
  });
const reserve = (c: WorkerServiceClient, taskId: string, ttlMs = 30_000) =>
  unaryCall<RequestTaskSlotResponseWireOut>((md, o, cb) => c.requestTaskSlot({ taskId, ttlMs }, md, o, cb), {
    timeoutMs: 5_000,
  });
const getResult = (c: WorkerServiceClient, taskId: string) =>
  unaryCall<GetTaskResultResponseWireOut>((md, o, cb) => c.getTaskResult({ taskId }, md, o, cb), {
    timeoutMs: 5_000,
  });

function watchAll(c: WorkerServiceClient, taskIds: string[]): Promise<TaskUpdate[]> {
  return new Promise((resolve, reject) => {
    const updates: TaskUpdate[] = [];
    const stream = c.watchTasks({ taskIds });
    stream.on('data', (u: TaskUpdateWireOut) => updates.push(taskUpdateFromWire(u)));
    stream.on('end', () => resolve(updates));
    stream.on('error', reject);
  });
}

async function failure(
  p: Promise<unknown>,
): Promise<{ code: grpc.status | undefined; business: string | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    return { code: statusCodeOf(err), business: businessCodeOf(err), message: (err as Error).message };
  }
  throw new Error('expected the call to fail');
}

describe('worker process: status codes over real gRPC', () => {
  let w: WorkerProcess;
  beforeAll(async () => {
    w = await startWorker({ WORKER_TASK_SLOTS: '2' });
  });
  afterAll(() => w?.client.close());

  it('InvalidArgument → INVALID_ARGUMENT (ttl_ms 0, config not JSON, schema violation, negative timeout)', async () => {
    const cases = [
      reserve(w.client, 'a', 0),
      submit(
        w.client,
        hello('b', { functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{') } }),
      ),
      submit(
        w.client,
        hello('c', {
          functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{"callList":[]}') },
        }),
      ),
      submit(w.client, hello('d', { taskTimeoutMs: -1 })),
    ];
    for (const c of cases) {
      expect(await failure(c)).toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        business: 'InvalidArgument',
      });
    }
  });

  it('InvalidSlot → FAILED_PRECONDITION', async () => {
    expect(await failure(submit(w.client, hello('e'), 'bogus-slot'))).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      business: 'InvalidSlot',
    });
  });

  it('NotFound → NOT_FOUND', async () => {
    expect(await failure(getResult(w.client, 'unknown-task'))).toMatchObject({
      code: grpc.status.NOT_FOUND,
      business: 'NotFound',
    });
  });

  it('NoSlot → RESOURCE_EXHAUSTED', async () => {
    await reserve(w.client, 'r1');
    await reserve(w.client, 'r2');
    expect(await failure(reserve(w.client, 'r3'))).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      business: 'NoSlot',
    });
    expect(await failure(submit(w.client, hello('r3')))).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
    });
  });
});

describe('worker process: running tasks', () => {
  let w: WorkerProcess;
  beforeAll(async () => {
    w = await startWorker({ RESULT_RETENTION_MS: '400' });
  });
  afterAll(() => w?.client.close());

  it('runs examples/tasks/hello-world.json end to end: ["hello, ct2", "hello, blockx"]', async () => {
    const example = JSON.parse(readFileSync(path.join(REPO, 'examples/tasks/hello-world.json'), 'utf8')) as {
      task_id: string;
      functionCallConfig: { type: string; config: unknown };
      resultHandler: { type: string; config: unknown };
      taskTimeoutMs: number;
    };
    const task = taskInputToWire({
      taskId: example.task_id,
      functionCallConfig: example.functionCallConfig,
      resultHandler: example.resultHandler,
      taskTimeoutMs: example.taskTimeoutMs,
    });
    expect((await submit(w.client, task)).state).toBe('TASK_STATE_RUNNING');
    const updates = await watchAll(w.client, [example.task_id]);
    const last = updates.at(-1);
    expect(last).toMatchObject({
      taskId: example.task_id,
      state: 'SUCCEEDED',
      isTerminal: true,
      workerAddr: w.address,
    });
    expect(last?.result?.executeResult.pluginResults[0]).toMatchObject({
      pluginName: 'ReturnValueResultHandler',
      success: true,
      result: ['hello, ct2', 'hello, blockx'],
    });
  });

  it('a task over its timeout fails TIMED_OUT (retryable) and its call is cancelled', async () => {
    await submit(w.client, sleepy('slow', 20_000, 300));
    const started = Date.now();
    const updates = await watchAll(w.client, ['slow']);
    expect(updates.at(-1)?.result?.executeResult).toMatchObject({
      failureCode: 'TIMED_OUT',
      retryable: true,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a result is retained for RESULT_RETENTION_MS, then NotFound, and the id may run again', async () => {
    await submit(w.client, hello('kept'));
    await watchAll(w.client, ['kept']);
    expect((await getResult(w.client, 'kept')).state).toBe('TASK_STATE_SUCCEEDED');
    let code: grpc.status | undefined;
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      code = await getResult(w.client, 'kept').then(
        () => undefined,
        (err: unknown) => statusCodeOf(err),
      );
      if (code !== undefined) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(code).toBe(grpc.status.NOT_FOUND);
    expect((await submit(w.client, hello('kept'))).state).toBe('TASK_STATE_RUNNING');
    expect((await watchAll(w.client, ['kept'])).at(-1)?.state).toBe('SUCCEEDED');
  });
});

describe('worker process: draining on SIGTERM', () => {
  it('stops admitting (UNAVAILABLE), lets the running task finish, then exits 0', async () => {
    const w = await startWorker();
    await submit(w.client, sleepy('long', 1_500));
    const watching = watchAll(w.client, ['long']);
    await new Promise((r) => setTimeout(r, 100));
    const exited = waitForExit(w.child);
    w.child.kill('SIGTERM');
    let refused: { code: grpc.status | undefined; business: string | undefined } | undefined;
    for (let i = 0; i < 50 && refused?.code !== grpc.status.UNAVAILABLE; i++) {
      refused = await submit(w.client, hello(`late-${i}`)).then(
        () => undefined,
        (err: unknown) => ({ code: statusCodeOf(err), business: businessCodeOf(err) }),
      );
      if (refused === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    expect(refused).toMatchObject({ code: grpc.status.UNAVAILABLE, business: 'Unavailable' });
    const updates = await watching;
    expect(updates.at(-1)).toMatchObject({ taskId: 'long', state: 'SUCCEEDED' });
    expect(updates.at(-1)?.result?.executeResult.pluginResults[0]?.result).toEqual(['slept 1500']);
    await exited;
    expect(w.child.exitCode, w.output()).toBe(0);
    w.client.close();
  });

  it('exits 2 for an unknown deployment', async () => {
    const child = spawnTracked(
      process.execPath,
      ['--import', 'tsx', ENTRY, '--deployment', 'nope', '--config', CONFIG],
      {
        cwd: REPO,
      },
    );
    children.push(child);
    const out = captureOutput(child);
    await waitForExit(child);
    expect(child.exitCode).toBe(2);
    expect(out.text()).toContain('unknown deployment "nope"');
  });
});

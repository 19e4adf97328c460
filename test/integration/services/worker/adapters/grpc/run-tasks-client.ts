// A bare RunTasks client for the adapter tests (docs/batched-protocol.md § Worker): a real grpc-js
// duplex call that records every message and counts credits as a client must (received minus sent).
// It sends exactly what a test tells it to, credits or not. Not a test file.
import type * as grpc from '@grpc/grpc-js';
import { taskInputToWire } from '../../../../../../src/grpc/convert.js';
import type { WorkerServiceClient } from '../../../../../../src/grpc/proto.js';
import type {
  RunTasksRequestWire,
  RunTasksResponseWireOut,
  TaskAdmissionWireOut,
  TaskInputWire,
  TaskSubmissionWire,
  TaskUpdateWireOut,
} from '../../../../../../src/grpc/wire-types.js';

export interface RunTasksSession {
  readonly call: grpc.ClientDuplexStream<RunTasksRequestWire, RunTasksResponseWireOut>;
  readonly messages: RunTasksResponseWireOut[];
  readonly admissions: TaskAdmissionWireOut[];
  readonly updates: TaskUpdateWireOut[];
  /** Credits received minus tasks sent. */
  credits(): number;
  /** Credits received so far. */
  received(): number;
  send(tasks: readonly TaskSubmissionWire[]): void;
  /** Resolves once `done()` holds after a message (rejects if the stream ends first). */
  until(done: () => boolean, what?: string): Promise<void>;
  /** The call's final status (never rejects). */
  readonly status: Promise<grpc.StatusObject>;
  /** The status arrived. */
  isEnded(): boolean;
}

export function openRunTasks(client: WorkerServiceClient): RunTasksSession {
  const call = client.runTasks();
  const messages: RunTasksResponseWireOut[] = [];
  const admissions: TaskAdmissionWireOut[] = [];
  const updates: TaskUpdateWireOut[] = [];
  let received = 0;
  let sent = 0;
  let ended: grpc.StatusObject | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...waiters]) w();
  };
  call.on('data', (msg: RunTasksResponseWireOut) => {
    messages.push(msg);
    received += msg.credits;
    admissions.push(...msg.admissions);
    updates.push(...msg.updates);
    wake();
  });
  call.on('error', () => undefined); // the status below carries it
  const status = new Promise<grpc.StatusObject>((resolve) =>
    call.on('status', (s: grpc.StatusObject) => {
      ended = s;
      resolve(s);
      wake();
    }),
  );
  return {
    call,
    messages,
    admissions,
    updates,
    credits: () => received - sent,
    received: () => received,
    send(tasks) {
      sent += tasks.length;
      call.write({ tasks: [...tasks] });
    },
    until(done, what = 'condition') {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (done()) {
            waiters.delete(check);
            resolve();
          } else if (ended !== undefined) {
            waiters.delete(check);
            reject(new Error(`stream ended (${ended.code} ${ended.details}) before ${what}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    status,
    isEnded: () => ended !== undefined,
  };
}

/** A task with an empty call list and no writer: it succeeds without running anything. */
export function emptyTask(taskId: string): TaskInputWire {
  return taskInputToWire({
    taskId,
    functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [] } },
    taskTimeoutMs: 0,
  });
}

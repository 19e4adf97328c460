// Real grpc-js servers on 127.0.0.1:0 playing scripted parts of the batched protocol
// (docs/batched-protocol.md) for the client's tests: a Worker serving RunTasks with a credit window and a
// Coordinator serving ReserveWorkerSlots. The unary RPCs answer UNIMPLEMENTED unless a test adds them.
import * as grpc from '@grpc/grpc-js';
import { taskResultToWire, taskUpdateToWire } from '../../../src/grpc/convert.js';
import type { CoordinatorServiceHandlers, WorkerServiceHandlers } from '../../../src/grpc/proto.js';
import type {
  RunTasksRequestWireOut,
  RunTasksResponseWire,
  TaskAdmissionWire,
  TaskUpdateWire,
} from '../../../src/grpc/wire-types.js';
import { succeeded, type Ending, type Fault } from './fake-servers.js';

const unimplemented = (cb: (e: grpc.ServiceError) => void): void =>
  cb(
    Object.assign(new Error('not in this fake'), {
      code: grpc.status.UNIMPLEMENTED,
      details: 'not in this fake',
      metadata: new grpc.Metadata(),
    }),
  );

export interface Received {
  readonly stream: number;
  readonly taskId: string;
  readonly slotId: string;
}

/**
 * RunTasks with `credits` per stream. Each task is admitted RUNNING (or refused by `admissionScript`,
 * keyed by task id: a list of faults consumed one per submission) and ends `terminalAfterMs` later with
 * `endings.get(id) ?? defaultEnding`. A task id it already finished answers its retained result.
 */
export class BatchFakeWorker {
  credits = 8;
  terminalAfterMs = 2;
  defaultEnding: Ending = succeeded(['ok']);
  readonly endings = new Map<string, Ending>();
  readonly admissionScript = new Map<string, Fault[]>();
  /** Ends a stream with this status after admitting this many tasks on it (once per entry). */
  breakAfter: { admitted: number; status: grpc.status }[] = [];
  /** On a scripted break, forget the tasks admitted on that stream (a restart): they answer InvalidSlot. */
  forgetOnBreak = false;
  /** Every stream fails at once with this status (a Worker that is gone). */
  failEveryStream: grpc.status | undefined;
  readonly received: Received[] = [];
  readonly finished = new Map<string, Ending>();
  streams = 0;
  /** The most tasks one stream had sent and unanswered (admission pending or running) at once. */
  maxInFlight = 0;
  overCredit = 0;
  address = '';

  handlers(): Pick<WorkerServiceHandlers, 'RunTasks' | 'RequestTaskSlots'> {
    return {
      RequestTaskSlots: (_call, cb) => unimplemented(cb),
      RunTasks: (call) => this.onStream(call),
    };
  }

  private onStream(call: grpc.ServerDuplexStream<RunTasksRequestWireOut, RunTasksResponseWire>): void {
    const stream = ++this.streams;
    if (this.failEveryStream !== undefined) {
      call.emit(
        'error',
        Object.assign(new Error('gone'), {
          code: this.failEveryStream,
          details: 'gone',
          metadata: new grpc.Metadata(),
        }),
      );
      return;
    }
    const rule = this.breakAfter.shift();
    let inFlight = 0;
    let admittedHere = 0;
    let balance = this.credits;
    let done = false;
    const timers = new Set<NodeJS.Timeout>();
    const write = (msg: RunTasksResponseWire): void => {
      if (!done) call.write(msg);
    };
    call.on('cancelled', () => {
      done = true;
      for (const t of timers) clearTimeout(t);
    });
    write({ credits: this.credits, admissions: [], updates: [] });
    call.on('data', (req: RunTasksRequestWireOut) => {
      if (done) return;
      const admissions: TaskAdmissionWire[] = [];
      let returned = 0;
      for (const sub of req.tasks) {
        const taskId = sub.task?.taskId ?? '';
        this.received.push({ stream, taskId, slotId: sub.slotId });
        balance--;
        if (balance < 0) this.overCredit++;
        const fault = this.admissionScript.get(taskId)?.shift();
        if (fault !== undefined) {
          admissions.push({
            taskId,
            error: { code: fault.business ?? '', status: fault.status, message: fault.message ?? 'scripted' },
          });
          returned++;
          continue;
        }
        const retained = this.finished.get(taskId);
        if (retained !== undefined) {
          admissions.push({
            taskId,
            state: `TASK_STATE_${retained.state}`,
            result: taskResultToWire(retained.result),
          });
          returned++;
          continue;
        }
        admissions.push({ taskId, state: 'TASK_STATE_RUNNING' });
        inFlight++;
        admittedHere++;
        this.maxInFlight = Math.max(this.maxInFlight, inFlight);
        const t = setTimeout(() => {
          timers.delete(t);
          if (done) return;
          const ending = this.endings.get(taskId) ?? this.defaultEnding;
          this.finished.set(taskId, ending);
          inFlight--;
          balance++;
          const update: TaskUpdateWire = taskUpdateToWire({
            taskId,
            state: ending.state,
            isTerminal: true,
            workerAddr: this.address,
            timestampMs: 1,
            result: ending.result,
            error: '',
          });
          write({ credits: 1, admissions: [], updates: [update] });
        }, this.terminalAfterMs);
        timers.add(t);
      }
      balance += returned;
      write({ credits: returned, admissions, updates: [] });
      if (rule !== undefined && admittedHere >= rule.admitted) {
        if (this.forgetOnBreak) {
          for (const r of this.received.filter((x) => x.stream === stream)) {
            if (!this.finished.has(r.taskId)) {
              this.admissionScript.set(r.taskId, [
                { status: grpc.status.FAILED_PRECONDITION, business: 'InvalidSlot' },
              ]);
            }
          }
        }
        done = true;
        for (const t of timers) clearTimeout(t);
        call.emit(
          'error',
          Object.assign(new Error('broken'), {
            code: rule.status,
            details: 'scripted break',
            metadata: new grpc.Metadata(),
          }),
        );
      }
    });
    call.on('end', () => {
      const finish = (): void => {
        if (inFlight === 0 && !done) {
          done = true;
          call.end();
        } else if (!done) setTimeout(finish, 1);
      };
      finish();
    });
  }
}

/** ReserveWorkerSlots (and the unary ReserveWorkerSlot): every id gets a slot on `workers[i % n]` unless `script` (per id) says otherwise. */
export class BatchFakeCoordinator {
  workers: string[] = [];
  readonly script = new Map<string, Fault[]>();
  readonly calls: string[][] = [];
  readonly unaryCalls: string[] = [];
  /** When set: at most `limit` slots granted and not yet finished (`finished()` counts the ended ones). */
  capacity: { readonly limit: number; readonly finished: () => number } | undefined;
  granted = 0;
  refusedForCapacity = 0;
  private slot = 0;
  private next = 0;

  handlers(): CoordinatorServiceHandlers {
    return {
      ReserveWorkerSlot: (call, cb) => {
        this.unaryCalls.push(call.request.taskId);
        const workerAddr = this.workers[this.next++ % this.workers.length] as string;
        cb(null, { taskId: call.request.taskId, workerAddr, slotId: `s${++this.slot}` });
      },
      ReserveWorkerSlots: (call, cb) => {
        const ids = [...call.request.taskIds];
        this.calls.push(ids);
        cb(null, {
          reservations: ids.map((taskId) => {
            const fault = this.script.get(taskId)?.shift();
            if (fault !== undefined) {
              return {
                taskId,
                error: {
                  code: fault.business ?? '',
                  status: fault.status,
                  message: fault.message ?? 'scripted',
                },
              };
            }
            if (
              this.capacity !== undefined &&
              this.granted - this.capacity.finished() >= this.capacity.limit
            ) {
              this.refusedForCapacity++;
              return {
                taskId,
                error: { code: 'NoExecutableSlot', status: grpc.status.RESOURCE_EXHAUSTED, message: 'full' },
              };
            }
            this.granted++;
            const workerAddr = this.workers[this.next++ % this.workers.length] as string;
            return { taskId, workerAddr, slotId: `s${++this.slot}` };
          }),
        });
      },
    };
  }
}

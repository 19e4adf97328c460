// ReservationMachine: the reservation protocol of ReserveWorkerSlot and ReserveWorkerSlots as a Sans-IO
// state machine (docs/coordinator.md § ReserveWorkerSlot; docs/batched-protocol.md § Coordinator:
// ReserveWorkerSlots). It never awaits, never reads a clock and never sends anything: each input
// (reservation-types.ts) carries `now`, and the machine answers with commands — `requestSlots(worker,
// ids)` — and events. It mutates the CoordinatorCore it is given (claimCandidate, settleClaim, the
// breaker feedback), so the adapter feeds every input under the core's write lock.
//
// Theory of operation (the four steps, breaker feedback once per request, cancellation, every claim
// settled exactly once): docs/coordinator.md § The reservation machine.

import type { CoordinatorCore } from './coordinator-core.js';
import { CoordinatorError, CoordinatorErrorCode, ReservationInputError } from './errors.js';
import type { CapacityReport, ClaimResult } from './inputs.js';
import type {
  RequestSlotsCommand,
  ReservationConfig,
  ReservationEvent,
  ReservationInput,
  ReservationStep,
  ReserveResult,
  SlotAnswer,
} from './reservation-types.js';
import {
  INTERNAL_RESERVATION_ERROR,
  UNABLE_TO_CONFIRM,
  allRejected,
  cancelledResult,
  claimResultOfGrant,
  isTerminalGrant,
  rejectionOutcome,
} from './reservation-outcomes.js';
import { validateReserveRequest } from './validate.js';

export {
  ALL_CANDIDATES_REJECTED,
  INTERNAL_RESERVATION_ERROR,
  REQUEST_CANCELLED,
  UNABLE_TO_CONFIRM,
  claimResultOfGrant,
  isTerminalGrant,
  rejectionOutcome,
} from './reservation-outcomes.js';

interface Task {
  readonly taskId: string;
  phase: 'new' | 'pending' | 'inFlight' | 'done';
  /** Workers that explicitly rejected this task (never claimed again by it). */
  readonly exclude: string[];
  /** Claims made, i.e. candidates tried. */
  claims: number;
  result: ReserveResult | undefined;
}

interface OpenRequest {
  readonly workerAddr: string;
  readonly attempt: number;
  readonly tasks: readonly Task[];
}

/** Feedback of one request, folded over its answers (see the header: once per request). */
interface RequestFeedback {
  granted: boolean;
  rejection: boolean;
  backpressure: boolean;
  readonly uncertain: string[];
  readonly gaveUp: string[];
  reason: string;
}

export class ReservationMachine {
  private readonly tasks: Task[] = [];
  /** Position in the request → index into `tasks` (repeated ids share one task). */
  private readonly slots: number[] = [];
  private readonly byId = new Map<string, Task>();
  private readonly requests = new Map<number, OpenRequest>();
  private pending: Task[] = [];
  private nextRequestId = 1;
  private unfinished = 0;
  private started = false;
  private isCancelled = false;
  private isAbandoned = false;
  private commands: RequestSlotsCommand[] = [];
  private events: ReservationEvent[] = [];

  constructor(
    private readonly core: CoordinatorCore,
    taskIds: readonly string[],
    private readonly config: ReservationConfig,
  ) {
    const index = new Map<string, number>();
    for (const taskId of taskIds) {
      let i = index.get(taskId);
      if (i === undefined) {
        i = this.tasks.length;
        index.set(taskId, i);
        const task: Task = { taskId, phase: 'new', exclude: [], claims: 0, result: undefined };
        this.byId.set(taskId, task);
        this.tasks.push(task);
      }
      this.slots.push(i);
    }
    this.unfinished = this.tasks.length;
  }

  /** Every distinct task has its result. */
  get done(): boolean {
    return this.unfinished === 0;
  }

  get cancelled(): boolean {
    return this.isCancelled;
  }

  /** Requests asked for and not answered yet. */
  get openRequests(): number {
    return this.requests.size;
  }

  /** Workers claimed for `taskId` so far (0 for an unknown id). */
  candidatesTriedOf(taskId: string): number {
    return this.byId.get(taskId)?.claims ?? 0;
  }

  /** One result per requested id, in request order (a repeated id gets its first copy's). */
  results(): ReserveResult[] {
    if (!this.done) throw new ReservationInputError('results read before the reservation finished');
    return this.slots.map((i) => this.tasks[i]!.result!);
  }

  /** Feeds one input; returns the requests to send and the events to report. */
  apply(input: ReservationInput): ReservationStep {
    if (this.isAbandoned)
      throw new ReservationInputError(`input ${input.type} after the machine was abandoned`);
    switch (input.type) {
      case 'start':
        this.start(input.now);
        break;
      case 'answered': {
        const req = this.take(input.requestId);
        if (input.answers.length !== req.tasks.length) {
          throw new ReservationInputError(
            `request ${input.requestId} asked for ${req.tasks.length} ids, got ${input.answers.length} answers`,
          );
        }
        this.answer(req, (i) => input.answers[i]!, input.now, input.capacity);
        break;
      }
      case 'callFailed':
        this.answer(this.take(input.requestId), () => input.answer, input.now);
        break;
      case 'internalError': {
        const req = this.take(input.requestId);
        for (const task of req.tasks) this.lose(task, req, 'maybeSlot', input.now);
        break;
      }
      case 'cancelled':
        this.isCancelled = true;
        for (const id of input.unsent) {
          // A retry that was not sent still follows one that was: the Worker may hold a slot.
          const req = this.take(id);
          const result: ClaimResult = req.attempt > 0 ? 'maybeSlot' : 'noSlot';
          for (const task of req.tasks)
            this.settle(req.workerAddr, result, input.now, task, cancelledResult());
        }
        break;
      case 'abandoned':
        this.isAbandoned = true;
        for (const req of this.requests.values()) {
          for (const task of req.tasks) this.lose(task, req, 'maybeSlot', input.now);
        }
        this.requests.clear();
        break;
      default: {
        const _exhaustive: never = input;
        throw new ReservationInputError(`unknown input ${JSON.stringify(_exhaustive)}`);
      }
    }
    if (!this.isAbandoned) this.claimPending(input.now);
    const step: ReservationStep = { commands: this.commands, events: this.events };
    this.commands = [];
    this.events = [];
    return step;
  }

  private start(now: number): void {
    if (this.started) throw new ReservationInputError('start fed twice');
    this.started = true;
    let notReady: string | undefined;
    let readinessChecked = false;
    for (const task of this.tasks) {
      const invalid = validateReserveRequest(task.taskId);
      if (invalid !== undefined) {
        this.finish(task, { ok: false, error: invalid });
        continue;
      }
      if (!readinessChecked) {
        notReady = this.core.unavailableReason(now);
        readinessChecked = true;
      }
      if (notReady !== undefined) {
        this.finish(task, {
          ok: false,
          error: new CoordinatorError(CoordinatorErrorCode.Unavailable, notReady),
        });
        continue;
      }
      task.phase = 'pending';
      this.pending.push(task);
    }
  }

  private take(requestId: number): OpenRequest {
    if (!this.started) throw new ReservationInputError(`answer for request ${requestId} before start`);
    const req = this.requests.get(requestId);
    if (req === undefined)
      throw new ReservationInputError(`unknown or already answered request ${requestId}`);
    this.requests.delete(requestId);
    return req;
  }

  /** Steps 2 and 4: every pending task claims its next candidate; one command per chosen Worker. */
  private claimPending(now: number): void {
    if (this.pending.length === 0) return;
    const groups = new Map<string, Task[]>();
    for (const task of this.pending) {
      if (this.isCancelled) {
        this.finish(task, cancelledResult());
        continue;
      }
      if (task.claims >= this.core.config.maxCandidates) {
        this.finish(task, allRejected());
        continue;
      }
      const pick = this.core.claimCandidate(task.taskId, task.exclude, now);
      if (!pick.ok) {
        // Nothing tried yet, or the view stopped being trusted: the core's answer stands. After explicit
        // rejections, running out of candidates means every candidate rejected.
        const first = task.exclude.length === 0 || pick.error.code === CoordinatorErrorCode.Unavailable;
        this.finish(task, first ? { ok: false, error: pick.error } : allRejected());
        continue;
      }
      task.claims += 1;
      task.phase = 'inFlight';
      const group = groups.get(pick.workerAddr);
      if (group === undefined) groups.set(pick.workerAddr, [task]);
      else group.push(task);
    }
    this.pending = [];
    for (const [workerAddr, tasks] of groups) this.request(workerAddr, tasks, 0);
  }

  private request(workerAddr: string, tasks: readonly Task[], attempt: number): void {
    const requestId = this.nextRequestId++;
    this.requests.set(requestId, { workerAddr, attempt, tasks });
    this.commands.push({
      type: 'requestSlots',
      requestId,
      workerAddr,
      taskIds: tasks.map((t) => t.taskId),
      ttlMs: this.core.config.slotTtlMs,
      attempt,
    });
  }

  /**
   * Step 3 for every id of one request, then its feedback (once per request). With `capacity` (the
   * Worker's counts read after this request's grants) a granted claim becomes no local reservation: the
   * report, applied last, already counts its slot.
   */
  private answer(
    req: OpenRequest,
    answerOf: (i: number) => SlotAnswer,
    now: number,
    capacity?: CapacityReport,
  ): void {
    const { workerAddr } = req;
    const fb: RequestFeedback = {
      granted: false,
      rejection: false,
      backpressure: false,
      uncertain: [],
      gaveUp: [],
      reason: '',
    };
    const retry: Task[] = [];
    for (let i = 0; i < req.tasks.length; i++) {
      const task = req.tasks[i]!;
      const a = answerOf(i);
      let uncertainReason: string;
      switch (a.type) {
        case 'granted':
          // A slot, or a retained terminal result of this task id on that Worker: the task ran there,
          // and SubmitTask (with the empty slot id) returns its result there. Routing it anywhere else
          // would run it a second time. Any other empty slot id is an uncertain outcome
          // (docs/coordinator.md).
          if (a.slotId !== '' || isTerminalGrant(a.state)) {
            fb.granted = true;
            const claim = capacity === undefined ? claimResultOfGrant(a.state) : 'noSlot';
            this.settle(workerAddr, claim, now, task, {
              ok: true,
              taskId: task.taskId,
              workerAddr,
              slotId: a.slotId,
            });
            continue;
          }
          uncertainReason = 'success without a slot id';
          break;
        case 'rejected': {
          const outcome = rejectionOutcome(a.code);
          fb[outcome] = true;
          this.core.settleClaim(workerAddr, 'noSlot', now);
          this.events.push({
            type: 'rejected',
            workerAddr,
            taskId: task.taskId,
            code: a.code,
            kind: a.kind,
            outcome,
            reason: a.reason,
          });
          task.exclude.push(workerAddr);
          task.phase = 'pending';
          this.pending.push(task);
          continue;
        }
        case 'uncertain':
          uncertainReason = a.reason;
          break;
        default: {
          const _exhaustive: never = a;
          throw new ReservationInputError(`unknown answer ${JSON.stringify(_exhaustive)}`);
        }
      }
      fb.uncertain.push(task.taskId);
      fb.reason = uncertainReason;
      if (this.isCancelled) {
        // The Client went away: the uncertainty is ours, not the Worker's, so it is not counted.
        this.settle(workerAddr, 'maybeSlot', now, task, cancelledResult());
      } else if (req.attempt < this.config.maxTimeoutRetries) {
        retry.push(task);
      } else {
        fb.gaveUp.push(task.taskId);
        this.settle(workerAddr, 'maybeSlot', now, task, {
          ok: false,
          error: new CoordinatorError(CoordinatorErrorCode.SlotUncertain, UNABLE_TO_CONFIRM),
        });
      }
    }
    if (fb.uncertain.length > 0) {
      this.events.push({
        type: 'uncertain',
        workerAddr,
        taskIds: fb.uncertain,
        attempt: req.attempt,
        reason: fb.reason,
      });
    }
    if (capacity !== undefined) this.core.applyCapacityReport(workerAddr, capacity, now);
    this.feedback(req, fb, now);
    if (retry.length > 0) this.request(workerAddr, retry, req.attempt + 1);
  }

  private feedback(req: OpenRequest, fb: RequestFeedback, now: number): void {
    const { workerAddr } = req;
    let opened = false;
    if (fb.granted) {
      this.core.recordSlotSuccess(workerAddr, now);
    } else if (fb.gaveUp.length > 0) {
      opened = this.core.recordSlotTimeout(workerAddr, now);
      if (opened) this.events.push({ type: 'breakerOpened', workerAddr, cause: 'timeout' });
    } else if (fb.rejection) {
      opened = this.core.recordSlotRejection(workerAddr, now);
      if (opened) this.events.push({ type: 'breakerOpened', workerAddr, cause: 'rejection' });
    } else if (fb.backpressure) {
      this.core.recordSlotBackpressure(workerAddr, now);
    }
    if (fb.gaveUp.length > 0) {
      this.events.push({
        type: 'gaveUp',
        workerAddr,
        taskIds: fb.gaveUp,
        retries: this.config.maxTimeoutRetries,
        reason: fb.reason,
        breakerOpened: opened,
      });
    }
  }

  /** The request of `task` is lost: Internal, the claim settled as `result`, nobody blamed. */
  private lose(task: Task, req: OpenRequest, result: ClaimResult, now: number): void {
    this.settle(req.workerAddr, result, now, task, {
      ok: false,
      error: new CoordinatorError(CoordinatorErrorCode.Internal, INTERNAL_RESERVATION_ERROR),
    });
  }

  private settle(
    workerAddr: string,
    result: ClaimResult,
    now: number,
    task: Task,
    final: ReserveResult,
  ): void {
    this.core.settleClaim(workerAddr, result, now);
    this.finish(task, final);
  }

  private finish(task: Task, result: ReserveResult): void {
    if (task.phase === 'done') throw new ReservationInputError(`task finished twice`);
    task.phase = 'done';
    task.result = result;
    this.unfinished -= 1;
    this.events.push({ type: 'finished', taskId: task.taskId, result, candidatesTried: task.claims });
  }
}

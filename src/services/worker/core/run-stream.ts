// The credit window of one RunTasks stream (docs/batched-protocol.md § Worker): what the stream may
// admit, what it owes the client, and what leaves in the next message. Sans-IO: no clock, no timers.
//
// Theory of operation. A RunTasks stream carries many SubmitTasks and their terminal updates. The
// Worker bounds what one client can make it hold with credits: the stream opens with a grant of
// `window` credits, every submission takes one, and every credit comes back to the client exactly once:
//   - with the submission's admission when no terminal update will follow on this stream: a refusal,
//     a retained result, or a duplicate of a task already in flight on this stream;
//   - otherwise with the task's terminal update (the task is "in flight" until then).
// At any moment
//
//     balance + claimed + inFlight + queuedReturns = window
//
// `balance`: credits sent to the client and not used yet, as the Worker counts them (a client never
// holds more: credits only reach it in messages already sent); `claimed`: a credit taken by the
// submission whose admission the adapter is running now (0 or 1); `inFlight`: tasks admitted RUNNING
// here, waiting for their terminal update; `queuedReturns`: credits in the outbox, not sent yet. So a
// client that stops reading can make the Worker hold at most `window` tasks' outcomes: new tasks need
// credits, and credits only leave with the outcomes that return them.
//
// A submission without a credit is refused on its own (NoSlot, naming the window), takes nothing and
// returns nothing; the stream lives on. More than `maxOverCreditRun` (default: the window) such
// submissions in a row is a protocol violation: the stream is to fail with RESOURCE_EXHAUSTED. So is
// one request message with more than MAX_BATCH_TASKS tasks.
//
// The outbox. Admissions of one request leave together in the message the adapter takes right after
// that request (`takeMessage`); terminal updates wait for the adapter's flush window and leave in
// messages of at most `maxUpdateBytes` of updates. Each message carries exactly the credits its own
// contents return (plus the opening grant), so a credit never reaches the client before the outcome it
// belongs to. Admissions (A) and updates (U) are opaque values to this core.
//
// The stream is finished once the client half-closed and nothing is in flight or queued: the adapter
// then ends the call with OK.

import { MAX_BATCH_TASKS } from '../../../kernel/input-bounds.js';
import { RunStreamInputError } from './errors.js';

export interface RunStreamOptions {
  /** Credits granted when the stream opens: the most tasks the client keeps in flight on it. */
  readonly window: number;
  /** Over-credit submissions in a row tolerated before the stream fails. Default: `window`. */
  readonly maxOverCreditRun?: number;
  /** Most tasks in one request message. Default MAX_BATCH_TASKS. */
  readonly maxBatchTasks?: number;
}

/** What SubmitTask answered for one submission, as far as credits are concerned. */
export type AdmissionOutcome =
  /** RUNNING: admitted now, or already running (on this stream, another one, or a unary SubmitTask). */
  | 'Running'
  /** A retained terminal result answered. */
  | 'Terminal'
  /** An admission error (InvalidArgument, NoSlot, InvalidSlot, Unavailable). */
  | 'Refused';

export type RunStreamFailure = 'CreditViolation' | 'BatchTooLarge';

/** Fail the stream with RESOURCE_EXHAUSTED; the core accepts no further input. */
export interface FailStream {
  readonly type: 'FailStream';
  readonly reason: RunStreamFailure;
  readonly message: string;
}

export type RequestVerdict = { readonly type: 'Accept' } | FailStream;

export type SubmissionVerdict =
  /** A credit was taken: run SubmitTask, then report it with `admissionDecided`. */
  | { readonly type: 'Admit' }
  /** No credit: answer this task with `WorkerAdmissionError.noCredit(taskId, window)` (outcome Refused). */
  | { readonly type: 'RefuseNoCredit'; readonly window: number }
  | FailStream;

export type AdmissionVerdict =
  /** Newly in flight on this stream: watch it; exactly one terminal update will follow. */
  | { readonly type: 'Watch' }
  /** Already in flight on this stream: no second watch, no second terminal update; credit returned. */
  | { readonly type: 'Duplicate' }
  /** Refused or answered with a retained result: nothing follows; credit returned (if one was taken). */
  | { readonly type: 'Answered' };

/** One RunTasksResponse in domain form. */
export interface RunStreamMessage<A, U> {
  readonly credits: number;
  readonly admissions: readonly A[];
  readonly updates: readonly U[];
}

export interface RunStreamStats {
  readonly window: number;
  /** Credits the client holds, as the Worker counts them. */
  readonly balance: number;
  readonly inFlight: number;
  /** Admissions and terminal updates waiting in the outbox. */
  readonly queuedAdmissions: number;
  readonly queuedUpdates: number;
  /** Credits the outbox will return with its contents (and the opening grant until it is sent). */
  readonly queuedReturns: number;
  readonly overCreditRun: number;
  readonly state: RunStreamState;
}

export type RunStreamState = 'Open' | 'InputEnded' | 'Closed';

interface QueuedAdmission<A> {
  readonly value: A;
  readonly returnsCredit: boolean;
}
interface QueuedUpdate<U> {
  readonly value: U;
  readonly bytes: number;
}

export class RunStream<A, U> {
  readonly window: number;
  private readonly maxOverCreditRun: number;
  private readonly maxBatchTasks: number;
  private balance = 0;
  /** The opening grant, until the first message carries it. */
  private grant: number;
  /** The submission between `submissionReceived` and `admissionDecided`: paid with a credit or not. */
  private pending: 'paid' | 'unpaid' | undefined;
  private readonly inFlight = new Set<string>();
  private admissions: QueuedAdmission<A>[] = [];
  private updates: QueuedUpdate<U>[] = [];
  private overCreditRun = 0;
  private state: RunStreamState = 'Open';

  constructor(options: RunStreamOptions) {
    requirePositiveInteger('window', options.window);
    this.window = options.window;
    this.maxOverCreditRun = options.maxOverCreditRun ?? options.window;
    this.maxBatchTasks = options.maxBatchTasks ?? MAX_BATCH_TASKS;
    requirePositiveInteger('maxOverCreditRun', this.maxOverCreditRun);
    requirePositiveInteger('maxBatchTasks', this.maxBatchTasks);
    this.grant = options.window;
  }

  // ---- Inputs --------------------------------------------------------------------------------------

  /** A request message with `taskCount` submissions arrived. */
  requestReceived(taskCount: number): RequestVerdict {
    this.requireState('Open', 'requestReceived');
    if (taskCount > this.maxBatchTasks) {
      return this.fail(
        'BatchTooLarge',
        `a RunTasksRequest may carry at most ${this.maxBatchTasks} tasks, got ${taskCount}`,
      );
    }
    return { type: 'Accept' };
  }

  /** One submission of the current request, before its admission runs. */
  submissionReceived(): SubmissionVerdict {
    this.requireState('Open', 'submissionReceived');
    if (this.pending !== undefined) {
      throw new RunStreamInputError('submissionReceived: the previous submission was not decided');
    }
    if (this.balance > 0) {
      this.balance--;
      this.pending = 'paid';
      this.overCreditRun = 0;
      return { type: 'Admit' };
    }
    this.overCreditRun++;
    if (this.overCreditRun > this.maxOverCreditRun) {
      return this.fail(
        'CreditViolation',
        `${this.overCreditRun} tasks in a row sent without a credit (credit window ${this.window})`,
      );
    }
    this.pending = 'unpaid';
    return { type: 'RefuseNoCredit', window: this.window };
  }

  /** The admission of the current submission: its outcome and the admission to send. */
  admissionDecided(taskId: string, outcome: AdmissionOutcome, admission: A): AdmissionVerdict {
    this.requireState('Open', 'admissionDecided');
    const paid = this.pending;
    if (paid === undefined) throw new RunStreamInputError('admissionDecided: no submission pending');
    if (paid === 'unpaid' && outcome !== 'Refused') {
      throw new RunStreamInputError(`admissionDecided: a submission without credit must be Refused`);
    }
    this.pending = undefined;
    switch (outcome) {
      case 'Running':
        if (this.inFlight.has(taskId)) {
          this.admissions.push({ value: admission, returnsCredit: true });
          return { type: 'Duplicate' };
        }
        this.inFlight.add(taskId);
        this.admissions.push({ value: admission, returnsCredit: false });
        return { type: 'Watch' };
      case 'Terminal':
      case 'Refused':
        this.admissions.push({ value: admission, returnsCredit: paid === 'paid' });
        return { type: 'Answered' };
      default: {
        const unreachable: never = outcome;
        throw new RunStreamInputError(`admissionDecided: unknown outcome ${String(unreachable)}`);
      }
    }
  }

  /**
   * The terminal update of `taskId` (`bytes`: its approximate encoded size). Queued, returning its
   * credit, when the task is in flight on this stream; otherwise ignored (returns false).
   */
  terminal(taskId: string, update: U, bytes: number): boolean {
    if (this.state === 'Closed' || !this.inFlight.delete(taskId)) return false;
    this.updates.push({ value: update, bytes });
    return true;
  }

  /** The client half-closed: no more requests. */
  inputEnded(): void {
    if (this.state === 'Open') this.state = 'InputEnded';
  }

  /** The stream is gone (cancelled, failed, or ended): returns the ids still in flight; nothing is sent. */
  close(): string[] {
    const left = [...this.inFlight];
    this.state = 'Closed';
    this.inFlight.clear();
    this.admissions = [];
    this.updates = [];
    this.grant = 0;
    this.pending = undefined;
    return left;
  }

  // ---- Output --------------------------------------------------------------------------------------

  /**
   * The next message: every queued admission, then updates while their bytes stay within
   * `maxUpdateBytes` (at least one when the message would carry nothing else), and the credits these
   * return. Undefined when nothing is queued. The credits count as the client's from here on.
   */
  takeMessage(maxUpdateBytes = Number.POSITIVE_INFINITY): RunStreamMessage<A, U> | undefined {
    if (this.state === 'Closed') return undefined;
    if (this.grant === 0 && this.admissions.length === 0 && this.updates.length === 0) return undefined;
    let credits = this.grant;
    const admissions = this.admissions.map((a) => {
      if (a.returnsCredit) credits++;
      return a.value;
    });
    this.admissions = [];
    let taken = 0;
    let bytes = 0;
    while (taken < this.updates.length) {
      const next = (this.updates[taken] as QueuedUpdate<U>).bytes;
      const first = taken === 0 && admissions.length === 0;
      if (!first && bytes + next > maxUpdateBytes) break;
      bytes += next;
      taken++;
    }
    const updates = this.updates.slice(0, taken).map((u) => u.value);
    this.updates = taken === this.updates.length ? [] : this.updates.slice(taken);
    credits += updates.length;
    this.grant = 0;
    this.balance += credits;
    return { credits, admissions, updates };
  }

  // ---- Queries -------------------------------------------------------------------------------------

  /** Something waits in the outbox. */
  get hasQueued(): boolean {
    return (
      this.state !== 'Closed' && (this.grant > 0 || this.admissions.length > 0 || this.updates.length > 0)
    );
  }

  /** The client half-closed and every task's outcome has been taken: end the call with OK. */
  get finished(): boolean {
    return (
      this.state === 'InputEnded' && this.inFlight.size === 0 && this.pending === undefined && !this.hasQueued
    );
  }

  get closed(): boolean {
    return this.state === 'Closed';
  }

  isInFlight(taskId: string): boolean {
    return this.inFlight.has(taskId);
  }

  stats(): RunStreamStats {
    return {
      window: this.window,
      balance: this.balance,
      inFlight: this.inFlight.size,
      queuedAdmissions: this.admissions.length,
      queuedUpdates: this.updates.length,
      queuedReturns: this.queuedReturns(),
      overCreditRun: this.overCreditRun,
      state: this.state,
    };
  }

  /** The conservation law above; an empty list when it holds (tests). */
  checkInvariants(): string[] {
    if (this.state === 'Closed') return [];
    const problems: string[] = [];
    const claimed = this.pending === 'paid' ? 1 : 0;
    const sum = this.balance + claimed + this.inFlight.size + this.queuedReturns();
    if (sum !== this.window) {
      problems.push(
        `balance ${this.balance} + claimed ${claimed} + inFlight ${this.inFlight.size} + queued ${this.queuedReturns()} = ${sum}, not the window ${this.window}`,
      );
    }
    if (this.balance < 0) problems.push(`negative balance ${this.balance}`);
    if (this.inFlight.size > this.window)
      problems.push(`${this.inFlight.size} in flight > window ${this.window}`);
    return problems;
  }

  // ---- Internals -----------------------------------------------------------------------------------

  private queuedReturns(): number {
    let n = this.grant + this.updates.length;
    for (const a of this.admissions) if (a.returnsCredit) n++;
    return n;
  }

  private fail(reason: RunStreamFailure, message: string): FailStream {
    this.close();
    return { type: 'FailStream', reason, message };
  }

  private requireState(expected: RunStreamState, input: string): void {
    if (this.state !== expected) {
      throw new RunStreamInputError(`${input}: the stream is ${this.state}, not ${expected}`);
    }
  }
}

function requirePositiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RunStreamInputError(`${name} must be a positive integer, got ${String(value)}`);
  }
}

// The IO half of the reservation protocol: runs one ReservationMachine (core/reservation.ts) by
// performing the requests it asks for and feeding their answers back (docs/batched-protocol.md
// § Coordinator: ReserveWorkerSlots). It decides nothing itself.
//
//   - Every machine input is fed under the core's write lock (the machine mutates the core: claims,
//     settlements, breaker feedback); the requests go out and the events are reported outside it.
//   - Requests run concurrently, one per Worker the machine chose; answers are fed as they arrive (all
//     that arrived meanwhile in one lock section), so a slow Worker holds up only its own ids.
//   - Cancellation is read from the Client's signal at the two points the unary loop read it: before
//     sending (the requests are reported unsent) and when an answer arrives (the machine is told first,
//     so an uncertain answer caused by the cancel is not counted against the Worker).
//   - A SlotReserver never rejects by contract; if one does, that request is fed as `internalError` and
//     the error is handed back. If the driver itself fails, the machine is abandoned, which settles every
//     open claim: claims are settled exactly once whatever happens.

import type { CancelSignal } from '../../../kernel/cancel.js';
import type { ReservationMachine } from '../core/reservation.js';
import type {
  RequestSlotsCommand,
  ReservationEvent,
  ReservationInput,
  ReservationStep,
  SlotAnswer,
} from '../core/reservation-types.js';
import type { RwLock } from './rw-lock.js';
import type { SlotReply } from './slot-reserver.js';

/** Performs one command: one reply per id of `cmd.taskIds`, in order. */
export type SlotsSender = (
  cmd: RequestSlotsCommand,
  signal: CancelSignal | undefined,
) => Promise<readonly SlotReply[]>;

export interface DriveOptions {
  readonly machine: ReservationMachine;
  readonly lock: RwLock;
  /** UTC ms, the core's clock. */
  readonly clock: () => number;
  readonly send: SlotsSender;
  readonly signal?: CancelSignal | undefined;
  /** The events of each step, in order, outside the lock. */
  readonly onEvents: (events: readonly ReservationEvent[]) => void;
}

/** A reply as the machine's answer alphabet: only "may a slot exist?" matters (slot-reserver.ts). */
export function answerOf(reply: SlotReply): SlotAnswer {
  if (reply.ok) return { type: 'granted', slotId: reply.grant.slotId, state: reply.grant.state };
  const { error } = reply;
  if (error.kind === 'uncertain') return { type: 'uncertain', reason: error.message };
  return { type: 'rejected', code: error.code, kind: error.kind, reason: error.message };
}

type Arrival =
  | { readonly ok: true; readonly cmd: RequestSlotsCommand; readonly replies: readonly SlotReply[] }
  | { readonly ok: false; readonly cmd: RequestSlotsCommand; readonly err: unknown };

const NO_ERROR: { readonly thrown?: unknown } = Object.freeze({});

/**
 * Runs `machine` to completion. Resolves with `thrown`, the first error a send rejected with (its
 * request was fed as `internalError`), when there was one.
 */
export async function driveReservation(o: DriveOptions): Promise<{ readonly thrown?: unknown }> {
  const { machine, lock, clock, send, signal } = o;
  const arrivals: Arrival[] = [];
  let wake: (() => void) | undefined;
  let inFlight = 0;
  let result = NO_ERROR;
  const arrive = (a: Arrival): void => {
    arrivals.push(a);
    const w = wake;
    wake = undefined;
    w?.();
  };
  const feed = (inputs: readonly ReservationInput[]): Promise<ReservationStep> =>
    lock.write(() => mergeSteps(inputs.map((input) => machine.apply(input))));

  try {
    let step = await lock.write(() => machine.apply({ type: 'start', now: clock() }));
    for (;;) {
      o.onEvents(step.events);
      if (step.commands.length > 0 && signal?.aborted === true) {
        const unsent = step.commands.map((c) => c.requestId);
        step = await lock.write(() => machine.apply({ type: 'cancelled', unsent, now: clock() }));
        continue;
      }
      for (const cmd of step.commands) {
        inFlight += 1;
        send(cmd, signal).then(
          (replies) => arrive({ ok: true, cmd, replies }),
          (err: unknown) => arrive({ ok: false, cmd, err }),
        );
      }
      if (inFlight === 0) break;
      if (arrivals.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const batch = arrivals.splice(0);
      inFlight -= batch.length;
      const inputs: ReservationInput[] = [];
      const now = clock();
      if (signal?.aborted === true && !machine.cancelled) inputs.push({ type: 'cancelled', unsent: [], now });
      for (const a of batch) {
        if (a.ok) {
          const answers = a.replies.map(answerOf);
          const capacity = a.replies[0]?.capacity;
          inputs.push({ type: 'answered', requestId: a.cmd.requestId, answers, capacity, now });
        } else {
          if (result === NO_ERROR) result = { thrown: a.err };
          inputs.push({ type: 'internalError', requestId: a.cmd.requestId, now });
        }
      }
      step = await feed(inputs);
    }
    if (!machine.done) throw new Error('reservation driver: nothing in flight but tasks unfinished');
  } catch (err) {
    await lock.write(() => machine.apply({ type: 'abandoned', now: clock() })).catch(() => undefined); // already abandoned: nothing left to settle
    throw err;
  }
  return result;
}

function mergeSteps(steps: readonly ReservationStep[]): ReservationStep {
  if (steps.length === 1) return steps[0]!;
  return {
    commands: steps.flatMap((s) => s.commands),
    events: steps.flatMap((s) => s.events),
  };
}

// Reservations per client (docs/security.md § Reservations per client): the fixed limit
// `maxReservedSlotsPerClient` and the fair-share reclaim of unsubmitted reservations on a full worker.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  TaskState,
  WorkerAdmissionError,
  type WorkerCore,
} from '../../../../../src/services/worker/core/index.js';
import { admissionError, commandOf, makeCore, taskInput, typesOf } from './harness.js';

const reserve = (core: WorkerCore, taskId: string, client: string, now = 0) =>
  core.handleRequestTaskSlot(taskId, 1_000, now, client);

describe('maxReservedSlotsPerClient', () => {
  it('refuses a client at its limit with NoSlot naming the client, and only that client', () => {
    const core = makeCore({ taskSlots: 8, maxReservedSlotsPerClient: 2 });
    reserve(core, 'a1', 'alice');
    reserve(core, 'a2', 'alice');
    const err = admissionError(() => reserve(core, 'a3', 'alice'), 'NoSlot');
    expect(err.detail).toEqual({ code: 'NoSlot', client: 'alice', reserved: 2, limit: 2 });
    expect(err.message).toMatch(
      /client alice holds 2 unsubmitted reservations \(maxReservedSlotsPerClient 2\)/,
    );
    expect(reserve(core, 'b1', 'bob').result.state).toBe(TaskState.ALLOCATED);
    expect(core.checkInvariants()).toEqual([]);
  });

  it('counts only unsubmitted reservations: a submitted task frees its client share', () => {
    const core = makeCore({ taskSlots: 8, maxReservedSlotsPerClient: 1 });
    const { slotId } = reserve(core, 'a1', 'alice').result;
    admissionError(() => reserve(core, 'a2', 'alice'), 'NoSlot');
    expect(core.handleSubmitTask(taskInput('a1'), slotId, 1, 'alice').result.accepted).toBe(true);
    expect(reserve(core, 'a2', 'alice', 1).result.state).toBe(TaskState.ALLOCATED);
    expect(core.checkInvariants()).toEqual([]);
  });

  it('applies to inline reservations too, and a repeated request for a held task is not a new one', () => {
    const core = makeCore({ taskSlots: 8, maxReservedSlotsPerClient: 1 });
    const first = reserve(core, 'a1', 'alice').result;
    expect(reserve(core, 'a1', 'alice').result.slotId).toBe(first.slotId);
    admissionError(() => core.handleSubmitTask(taskInput('a2'), undefined, 0, 'alice'), 'NoSlot');
    expect(core.handleSubmitTask(taskInput('b1'), undefined, 0, 'bob').result.accepted).toBe(true);
  });

  it('0 means no fixed limit: one client may reserve every slot', () => {
    const core = makeCore({ taskSlots: 5, maxReservedSlotsPerClient: 0 });
    for (let i = 0; i < 5; i++) reserve(core, `a${i}`, 'alice');
    const err = admissionError(() => reserve(core, 'a5', 'alice'), 'NoSlot');
    expect(err.detail).toEqual({ code: 'NoSlot', taskSlots: 5, slotsInUse: 5 });
  });
});

describe('fair-share reclaim on a full worker', () => {
  it('gives a newcomer the oldest reservation of the largest holder; its submit then gets InvalidSlot', () => {
    const core = makeCore({ taskSlots: 3 });
    const oldest = reserve(core, 'a1', 'alice').result.slotId;
    reserve(core, 'a2', 'alice', 1);
    reserve(core, 'a3', 'alice', 2);
    const step = reserve(core, 'b1', 'bob', 3);
    expect(step.result.state).toBe(TaskState.ALLOCATED);
    expect(commandOf(step, 'SlotReclaimed')).toEqual({ type: 'SlotReclaimed', slotId: oldest, taskId: 'a1' });
    const err = admissionError(
      () => core.handleSubmitTask(taskInput('a1'), oldest, 4, 'alice'),
      'InvalidSlot',
    );
    expect(err.detail).toMatchObject({ reason: 'SlotUnknown' });
    expect(core.checkInvariants()).toEqual([]);
  });

  it.each([
    // [name, holdings before the newcomer asks, newcomer, reclaims?]
    ['a lone client is never reclaimed from', { alice: 3 }, 'alice', false],
    ['holder with one more than the newcomer keeps it', { alice: 2, bob: 1 }, 'bob', false],
    ['holder with two more than the newcomer loses one', { alice: 3, bob: 1 }, 'bob', true],
    [
      'holder with one reservation keeps it against a client with none',
      { alice: 1, bob: 1, carol: 1 },
      'dave',
      false,
    ],
    ['the largest holder pays, not the first', { bob: 1, alice: 2 }, 'carol', true],
  ] as const)('%s', (_name, holdings, newcomer, reclaims) => {
    const slots = Object.values(holdings).reduce((a, b) => a + b, 0);
    const core = makeCore({ taskSlots: slots });
    let now = 0;
    for (const [client, count] of Object.entries(holdings)) {
      for (let i = 0; i < count; i++) reserve(core, `${client}-${i}`, client, now++);
    }
    if (!reclaims) {
      admissionError(() => reserve(core, 'new', newcomer, now), 'NoSlot');
    } else {
      const step = reserve(core, 'new', newcomer, now);
      expect(commandOf(step, 'SlotReclaimed').taskId).toBe('alice-0');
    }
    expect(core.checkInvariants()).toEqual([]);
  });

  it('never reclaims a submitted task, even while it is still preparing on an ALLOCATED slot', () => {
    const core = makeCore({ taskSlots: 2 });
    core.handleSubmitTask(taskInput('a1'), undefined, 0, 'alice');
    core.handleSubmitTask(taskInput('a2'), undefined, 0, 'alice');
    const err = admissionError(() => reserve(core, 'b1', 'bob'), 'NoSlot');
    expect(err.detail).toMatchObject({ taskSlots: 2, slotsInUse: 2 });
  });

  it('lets an inline submission reclaim too (the stream or unary SubmitTask of a client with no reservations)', () => {
    const core = makeCore({ taskSlots: 2 });
    reserve(core, 'a1', 'alice');
    reserve(core, 'a2', 'alice');
    const step = core.handleSubmitTask(taskInput('b1'), undefined, 0, 'bob');
    expect(step.result.accepted).toBe(true);
    expect(typesOf(step)).toEqual(['SlotReclaimed', 'PrepareTaskActivation']);
  });
});

describe('the heartbeat tells Coordinators what a newcomer could reclaim', () => {
  it.each([
    [{ alice: 1 }, undefined],
    [{ alice: 2 }, 1],
    [{ alice: 5, bob: 1 }, 2],
    [{ alice: 2, bob: 3 }, 1],
  ] as const)('holdings %o → reclaimableSlots %s', (holdings, want) => {
    const core = makeCore({ taskSlots: 8 });
    for (const [client, count] of Object.entries(holdings)) {
      for (let i = 0; i < count; i++) reserve(core, `${client}-${i}`, client);
    }
    expect(core.deriveHeartbeat(0).reclaimableSlots).toBe(want);
  });

  it('matches what a newcomer really gets on a full worker', () => {
    for (let held = 1; held <= 7; held++) {
      const core = makeCore({ taskSlots: held });
      for (let i = 0; i < held; i++) reserve(core, `a${i}`, 'alice');
      const advertised = core.deriveHeartbeat(0).reclaimableSlots ?? 0;
      let got = 0;
      while (got < held) {
        try {
          reserve(core, `b${got}`, 'bob');
        } catch {
          break;
        }
        got++;
      }
      expect(got, `alice held ${held}`).toBe(advertised);
    }
  });
});

describe('properties', () => {
  const requestArb = fc.record({ client: fc.constantFrom('alice', 'bob', 'carol'), submit: fc.boolean() });

  it('a client alone is never reclaimed from; with several, no one is reclaimed from unless it held 2 more than the asker', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(requestArb, { maxLength: 60 }),
        fc.boolean(),
        (taskSlots, requests, alone) => {
          const core = makeCore({ taskSlots });
          const held = new Map<string, number>();
          requests.forEach(({ client: c, submit }, i) => {
            const client = alone ? 'alice' : c;
            const before = new Map(held);
            let step;
            try {
              step = submit
                ? core.handleSubmitTask(taskInput(`t${i}`), undefined, i, client)
                : reserve(core, `t${i}`, client, i);
            } catch (err) {
              expect(err).toBeInstanceOf(WorkerAdmissionError);
              return;
            }
            for (const cmd of step.commands) {
              if (cmd.type !== 'SlotReclaimed') continue;
              const victim = cmd.taskId.startsWith('t') ? requests[Number(cmd.taskId.slice(1))]! : undefined;
              const victimClient = alone ? 'alice' : victim!.client;
              expect(alone).toBe(false);
              expect(victimClient).not.toBe(client);
              expect(before.get(victimClient) ?? 0).toBeGreaterThanOrEqual((before.get(client) ?? 0) + 2);
              held.set(victimClient, (held.get(victimClient) ?? 1) - 1);
            }
            if (!submit) held.set(client, (held.get(client) ?? 0) + 1);
            expect(core.checkInvariants()).toEqual([]);
          });
        },
      ),
    );
  });

  it('a client holding no reservation gets a slot whenever another holds two or more unsubmitted ones', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 0, max: 5 }), (taskSlots, submitted) => {
        const core = makeCore({ taskSlots });
        const running = Math.min(submitted, taskSlots - 2);
        for (let i = 0; i < running; i++) core.handleSubmitTask(taskInput(`s${i}`), undefined, 0, 'alice');
        for (let i = running; i < taskSlots; i++) reserve(core, `r${i}`, 'alice');
        expect(reserve(core, 'newcomer', 'bob').result.state).toBe(TaskState.ALLOCATED);
      }),
    );
  });
});

describe('task ids belong to their submitter (docs/security.md § Roles)', () => {
  /** Runs `id` for `client` to a retained result (its writer phase succeeds). */
  const runToEnd = (core: WorkerCore, id: string, client: string, now = 0) => {
    core.handleSubmitTask(taskInput(id), undefined, now, client);
    core.handleTaskActivationPrepared(id, 7, now);
    core.handleTaskPhaseFinished(id, 'Builder', { ok: true, calls: [['a']] }, now);
    core.handleTaskPhaseFinished(id, 'Calls', { ok: true, outputs: ['OWNED-BY-MALLORY'] }, now);
    core.handleTaskPhaseFinished(id, 'Plugin', { ok: true, pluginResults: [] }, now);
  };
  const stages: [string, (core: WorkerCore) => void][] = [
    ['reserved', (core) => reserve(core, 'x', 'mallory')],
    ['running', (core) => core.handleSubmitTask(taskInput('x'), undefined, 0, 'mallory')],
    ['retained', (core) => runToEnd(core, 'x', 'mallory')],
  ];

  it.each(stages)(
    "another client's id while %s: reserve and submit are TaskIdTaken, reads find nothing",
    (_stage, reach) => {
      const core = makeCore({ taskSlots: 4 });
      reach(core);
      const before = core.taskSnapshot('x', 1, 'mallory');
      expect(before.found).toBe(true);
      const taken = admissionError(() => reserve(core, 'x', 'alice', 1), 'TaskIdTaken');
      expect(taken.message).toMatch(
        /task id x is in use by another client on this worker: choose another id/,
      );
      admissionError(() => core.handleSubmitTask(taskInput('x'), undefined, 1, 'alice'), 'TaskIdTaken');
      admissionError(() => core.handleGetTaskResult('x', 1, 'alice'), 'NotFound');
      expect(core.taskSnapshot('x', 1, 'alice')).toEqual({ found: false, taskId: 'x' });
      // The owner still sees and reuses it, unchanged.
      expect(core.taskSnapshot('x', 1, 'mallory')).toEqual(before);
      expect(core.handleGetTaskResult('x', 1, 'mallory').state).toBe(before.found ? before.state : undefined);
      expect(core.checkInvariants()).toEqual([]);
    },
  );

  it('the submitter gets its retained result back; an id is free for anyone once its result is gone', () => {
    const core = makeCore({ taskSlots: 4, resultRetentionMs: 1_000 });
    runToEnd(core, 'x', 'mallory');
    expect(core.handleSubmitTask(taskInput('x'), undefined, 1, 'mallory').result).toMatchObject({
      accepted: false,
      state: TaskState.SUCCEEDED,
    });
    expect(core.handleSubmitTask(taskInput('x'), undefined, 2_000, 'alice').result.accepted).toBe(true);
  });
});

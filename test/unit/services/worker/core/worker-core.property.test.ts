// Property tests: random interleavings of every input on advancing virtual time. The driver
// (property-driver.ts) checks after every step: a slot is bound to at most one task; reservedSlots +
// runningTasks <= taskSlots and match the executing tasks; a task id is prepared at most once per
// retention window; every ConvergeTask releases the slot and is followed by its NotifyTerminal; phase
// commands come in order; refused admissions change nothing; nextDeadline is never in the past after a
// tick; the core's own table invariants hold.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Driver } from './property-driver.js';
import { MAX_TIMEOUT, actionArb, configArb } from './property-actions.js';

describe('WorkerCore under random interleavings', () => {
  it('keeps its invariants after every step', () => {
    fc.assert(
      fc.property(configArb, fc.array(actionArb, { maxLength: 150, size: 'max' }), (config, actions) => {
        const driver = new Driver(config);
        for (const action of actions) driver.run(action);
      }),
      { numRuns: 300 },
    );
  });

  it('every prepared task reaches a terminal state once the driver feeds results and time passes', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.array(actionArb, { maxLength: 100, size: 'max' }),
        fc.boolean(),
        (config, actions, feedResults) => {
          const driver = new Driver(config);
          for (const action of actions) driver.run(action);
          if (feedResults) {
            // Answering every command successfully, with time standing still, finishes every task
            // (activation, Builder, Calls, Plugin: four answers at most).
            for (let round = 0; round < 4; round++) {
              for (const id of [...driver.awaiting.keys()]) driver.follow(id, true, 'CANCELLED', undefined);
              driver.checkInvariants();
            }
            expect([...driver.awaiting.keys()]).toEqual([]);
          }
          // Time runs past every lease and deadline: whatever was left converges by the timers.
          driver.now += MAX_TIMEOUT + 1_000;
          driver.tick();
          driver.checkInvariants();
          expect([...driver.awaiting.keys()]).toEqual([]);
          for (const [id, n] of driver.prepares) expect(driver.converged.get(id)).toBe(n);
          expect(driver.core.deriveHeartbeat(driver.now)).toMatchObject({
            reservedSlots: 0,
            runningTasks: 0,
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('many submits of one id, interleaved with time and results, execute once per retention window', () => {
    const op = fc.oneof(
      fc.constant('submit' as const),
      fc.constant('follow' as const),
      fc.integer({ min: 0, max: 200 }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200, size: 'max' }), (ops) => {
        const driver = new Driver({
          taskSlots: 1,
          resultRetentionMs: 500,
          taskDeadlineMs: 300,
          defaultTtlMs: 100,
        });
        for (const o of ops) {
          if (o === 'submit')
            driver.run({ kind: 'submit', task: 0, client: 'alice', slot: 'none', timeout: 0 });
          else if (o === 'follow') driver.follow('t0', true, 'CANCELLED', undefined);
          else driver.run({ kind: 'advance', dt: o });
          driver.checkInvariants();
        }
        // The id did run again after its retention windows, never inside one (checked per step).
        expect(driver.prepares.get('t0') ?? 0).toBeGreaterThanOrEqual(ops.includes('submit') ? 1 : 0);
      }),
      { numRuns: 200 },
    );
  });
});

// New heads over Anvil's WebSocket endpoint (src/client/ingest-follow/new-heads.ts): the subscription is
// confirmed, a mined block ends a wait as an announcement, a wait with nothing mined ends as a timeout (the
// follower then polls), and when the node goes away the subscription says so and the waits are plain
// timeouts again: polling carries on. Anvil serves WebSocket on its HTTP port.
import { afterEach, describe, expect, it } from 'vitest';
import {
  subscribeNewHeads,
  type HeadAnnouncements,
  type NewHeadsState,
} from '../../../../src/client/ingest-follow/new-heads.js';
import { startAnvil, type AnvilNode } from '../../../support/anvil.js';
import { eventually } from '../../../support/eventually.js';

const open: { anvil?: AnvilNode; heads?: HeadAnnouncements }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.heads?.close();
    await o.anvil?.stop();
  }
});

describe('subscribeNewHeads against Anvil', () => {
  it('announces each mined block; without one a wait times out; a node gone is said, and waits time out', async () => {
    const anvil = await startAnvil();
    const states: NewHeadsState[] = [];
    const heads = subscribeNewHeads(anvil.url.replace(/^http/, 'ws'), { onState: (s) => states.push(s) });
    open.push({ anvil, heads });
    await eventually(() => expect(heads.live).toBe(true), { timeoutMs: 15_000, intervalMs: 50 });
    expect(states[0]).toEqual({ state: 'live' });
    // Going live counts as an announcement (heads may have come while it was down): take it.
    expect(await heads.wait(0)).toBe(true);
    expect(await heads.wait(50)).toBe(false);

    for (let i = 0; i < 3; i++) {
      const waiting = heads.wait(30_000);
      await anvil.rpc('evm_mine');
      expect(await waiting).toBe(true);
    }
    // A block mined while nobody waits is kept for the next wait.
    await anvil.rpc('evm_mine');
    await eventually(async () => expect(await heads.wait(0)).toBe(true), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });

    // An aborted wait ends at once, without an announcement.
    const stop = new AbortController();
    const aborted = heads.wait(30_000, stop.signal);
    stop.abort();
    expect(await aborted).toBe(false);

    await anvil.stop();
    await eventually(() => expect(heads.live).toBe(false), { timeoutMs: 15_000, intervalMs: 50 });
    const down = states.find((s) => s.state === 'down');
    expect(down).toMatchObject({ state: 'down', retryInMs: 1000 });
    expect(await heads.wait(100)).toBe(false);
  });

  it('keeps trying a node that is not there, doubling the wait, while the waits are plain timeouts', async () => {
    const states: NewHeadsState[] = [];
    // A port nothing listens on: refused at once.
    const heads = subscribeNewHeads('ws://127.0.0.1:1', { onState: (s) => states.push(s) });
    open.push({ heads });
    await eventually(
      () => expect(states.filter((s) => s.state === 'down').length).toBeGreaterThanOrEqual(2),
      {
        timeoutMs: 15_000,
        intervalMs: 50,
      },
    );
    const retries = states.flatMap((s) => (s.state === 'down' ? [s.retryInMs] : []));
    expect(retries.slice(0, 2)).toEqual([1000, 2000]);
    expect(heads.live).toBe(false);
    expect(await heads.wait(50)).toBe(false);
  });
});

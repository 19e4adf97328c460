// The heartbeat freshness rule (core/freshness.ts) as a table on virtual time, and its effect on every
// view that reports freshness: selection, the NoExecutableSlot/Unavailable outcome, worker status and the
// cluster status' not-routable reason.
import { describe, expect, it } from 'vitest';
import { heartbeatFreshness } from '../../../../../src/services/coordinator/core/freshness.js';
import { clusterStatus } from '../../../../../src/services/coordinator/core/cluster-status.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import { coreWith, hb, pick } from './fixtures.js';

const NOW = 1_000_000;
const CFG = { heartbeatTimeoutMs: 10_000, maxClockSkewMs: 5_000 };

describe('heartbeatFreshness', () => {
  it.each([
    { name: 'taken now', last: NOW, cfg: CFG, want: 'fresh' },
    { name: 'exactly at the timeout', last: NOW - 10_000, cfg: CFG, want: 'fresh' },
    { name: '1 ms past the timeout', last: NOW - 10_001, cfg: CFG, want: 'stale' },
    { name: 'slightly ahead (ordinary skew)', last: NOW + 200, cfg: CFG, want: 'fresh' },
    { name: 'exactly maxClockSkewMs ahead', last: NOW + 5_000, cfg: CFG, want: 'fresh' },
    { name: '1 ms beyond the skew', last: NOW + 5_001, cfg: CFG, want: 'ahead' },
    { name: 'the probe: 2^53 - 1', last: Number.MAX_SAFE_INTEGER, cfg: CFG, want: 'ahead' },
    { name: 'zero skew, 1 ms ahead', last: NOW + 1, cfg: { ...CFG, maxClockSkewMs: 0 }, want: 'ahead' },
    { name: 'zero skew, taken now', last: NOW, cfg: { ...CFG, maxClockSkewMs: 0 }, want: 'fresh' },
    { name: 'epoch 0', last: 0, cfg: CFG, want: 'stale' },
  ])('$name → $want', ({ last, cfg, want }) => {
    expect(heartbeatFreshness(last, NOW, cfg)).toBe(want);
  });
});

describe('a heartbeat beyond the skew is not fresh anywhere', () => {
  const ahead = hb('future:1', { taskSlots: 100_000, lastHeartbeatMs: NOW + 60_000 });

  it('alone in the view: Unavailable (no fresh worker), never routed', () => {
    const core = coreWith([ahead], {}, NOW);
    expect(pick(core, NOW)).toBe('!Unavailable');
  });

  it('next to a real worker: the real one is chosen although the forged one ranks first', () => {
    const core = coreWith([ahead, hb('real:1', { lastHeartbeatMs: NOW - 1 })], {}, NOW);
    for (let i = 0; i < 5; i++) expect(pick(core, NOW, [], `t${i}`)).toBe('real:1');
  });

  it('becomes routable once the clock catches up to within the skew', () => {
    const core = coreWith([hb('w:1', { lastHeartbeatMs: NOW + 6_000 })], {}, NOW);
    expect(pick(core, NOW)).toBe('!Unavailable');
    expect(pick(core, NOW + 1_000)).toBe('w:1');
  });

  it('the NoExecutableSlot message names it apart from timed-out heartbeats', () => {
    const core = coreWith(
      [
        ahead,
        hb('old:1', { lastHeartbeatMs: NOW - 20_000 }),
        hb('full:1', { lastHeartbeatMs: NOW, runningTasks: 4 }),
      ],
      {},
      NOW,
    );
    const r = core.selectCandidate('t', [], NOW);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error.message).toContain('heartbeat older than 10 s on 1 worker');
    expect(r.ok ? '' : r.error.message).toContain('heartbeat more than 5.0 s ahead of the clock on 1 worker');
  });

  it('worker and cluster status report it as not fresh', () => {
    const core = coreWith([ahead], {}, NOW);
    const [status] = core.workersSnapshot(NOW);
    expect(status?.heartbeatFresh).toBe(false);
    expect(clusterStatus(core, NOW).workers[0]?.notRoutable).toEqual({
      code: 'HEARTBEAT_TIMED_OUT',
      reason: "last heartbeat 60 s ahead of this coordinator's clock (max skew 5.0 s)",
    });
    expect(DEFAULT_COORDINATOR_CORE_CONFIG.maxClockSkewMs).toBe(5_000);
  });
});

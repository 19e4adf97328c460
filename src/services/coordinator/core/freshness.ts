// Heartbeat freshness: the one rule every view of the Workers (selection, cluster status, worker status)
// uses to decide whether a heartbeat can be trusted at `now`.
//
//   age = now - lastHeartbeatMs   (both UTC ms; lastHeartbeatMs by the Worker's clock)
//   stale: age > heartbeatTimeoutMs        (exactly at the timeout: fresh)
//   ahead: -age > maxClockSkewMs           (exactly at the skew bound: fresh)
//   fresh: otherwise
//
// Why `ahead` exists: a heartbeat stamped in the far future (2^53 - 1) never grows old, so without a bound
// it would stay routable forever and rank first on "newest heartbeat". Worker clocks drift by a little;
// anything further ahead than the bound is a broken clock or a forged key, and is treated as not fresh.
// Pure: no IO, no clock.

import type { CoordinatorCoreConfig } from './config.js';

export type HeartbeatFreshness = 'fresh' | 'stale' | 'ahead';

export function heartbeatFreshness(
  lastHeartbeatMs: number,
  now: number,
  cfg: Pick<CoordinatorCoreConfig, 'heartbeatTimeoutMs' | 'maxClockSkewMs'>,
): HeartbeatFreshness {
  const age = now - lastHeartbeatMs;
  if (age > cfg.heartbeatTimeoutMs) return 'stale';
  if (-age > cfg.maxClockSkewMs) return 'ahead';
  return 'fresh';
}

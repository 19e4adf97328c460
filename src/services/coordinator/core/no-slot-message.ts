// The text of a NoExecutableSlot error: every filter reason that removed a Worker, with its numbers, e.g.
//   no executable slot: 3 workers — cpu 0.95 > 0.90 on 1 worker; no free slots on 1 worker;
//   circuit open on 1 worker (closes in 4.2 s)
// The reasons come in the filter order of selection.ts; each red line names the worst value seen. The
// message reaches the Client as a gRPC status message, so it is built from numbers only (no address, no
// task id) and cut at MAX_NO_SLOT_MESSAGE: a status above ~64 KiB is never sent and hangs the connection.

import type { CoordinatorCoreConfig } from './config.js';
import type { FilterCounts, FilterDetails } from './errors.js';

export const MAX_NO_SLOT_MESSAGE = 1_024;

export function noExecutableSlotMessage(
  workerCount: number,
  filtered: Readonly<FilterCounts>,
  d: Readonly<FilterDetails>,
  cfg: Pick<
    CoordinatorCoreConfig,
    'heartbeatTimeoutMs' | 'maxClockSkewMs' | 'cpuRedLine' | 'memoryRedLine' | 'errorRateRedLine'
  >,
): string {
  const reasons: string[] = [];
  if (filtered.excluded > 0) reasons.push(`already tried ${workers(filtered.excluded)}`);
  const timedOut = filtered.heartbeatTimedOut - d.aheadOfClock;
  if (timedOut > 0) {
    reasons.push(
      `heartbeat older than ${seconds(cfg.heartbeatTimeoutMs)} on ${workers(timedOut)} (oldest ${seconds(d.oldestHeartbeatAgeMs)})`,
    );
  }
  if (d.aheadOfClock > 0) {
    reasons.push(
      `heartbeat more than ${seconds(cfg.maxClockSkewMs)} ahead of the clock on ${workers(d.aheadOfClock)} (up to ${seconds(d.furthestAheadMs)})`,
    );
  }
  if (d.cpuOver > 0) reasons.push(overLine('cpu', d.worstCpu, cfg.cpuRedLine, d.cpuOver));
  if (d.memoryOver > 0) reasons.push(overLine('memory', d.worstMemory, cfg.memoryRedLine, d.memoryOver));
  if (d.errorRateOver > 0) {
    reasons.push(overLine('error rate', d.worstErrorRate, cfg.errorRateRedLine, d.errorRateOver));
  }
  if (filtered.circuitOpen > 0) {
    reasons.push(
      `circuit open on ${workers(filtered.circuitOpen)} (closes in ${seconds(d.longestBreakerMs)} at most)`,
    );
  }
  if (filtered.noFreeCapacity > 0) reasons.push(`no free slots on ${workers(filtered.noFreeCapacity)}`);
  const text = `no executable slot: ${workers(workerCount)} — ${reasons.join('; ') || 'no reason recorded'}`;
  return text.length <= MAX_NO_SLOT_MESSAGE ? text : `${text.slice(0, MAX_NO_SLOT_MESSAGE - 1)}…`;
}

function workers(n: number): string {
  return n === 1 ? '1 worker' : `${n} workers`;
}

/** `cpu 0.95 > 0.90 on 2 workers`; more digits when two decimals would print the value as the line. */
function overLine(name: string, worst: number, line: number, count: number): string {
  let digits = 2;
  while (digits < 6 && worst.toFixed(digits) === line.toFixed(digits)) digits++;
  return `${name} ${short(worst, digits)} > ${line.toFixed(digits)} on ${workers(count)}`;
}

/** A number as text of bounded length (a corrupt heartbeat may carry 1e300). */
function short(x: number, digits: number): string {
  const s = x.toFixed(digits);
  return s.length <= 12 ? s : x.toPrecision(3);
}

function seconds(ms: number): string {
  if (ms >= 1e9) return `${(ms / 1000).toPrecision(3)} s`;
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

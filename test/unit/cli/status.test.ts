// `blockx status` rendering of a GetClusterStatus answer.
import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../../src/cli/commands/status.js';
import type { ClusterStatusView } from '../../../src/client/types.js';

const worker = (
  over: Partial<ClusterStatusView['workers'][number]>,
): ClusterStatusView['workers'][number] => ({
  workerAddr: 'w:1',
  registryPrefix: '/blockx/workers/',
  registryFormat: 'legacy',
  taskSlots: 8,
  reservedSlots: 1,
  runningTasks: 2,
  freeSlots: 5,
  cpuPercent: 0.25,
  memoryPercent: 0.5,
  memoryAvailableBytes: 1,
  memoryTotalBytes: 2,
  processRssBytes: 1,
  errorRate: 0,
  lastHeartbeatMs: 0,
  heartbeatAgeMs: 200,
  breakerState: 'closed',
  breakerOpenUntilMs: 0,
  consecutiveFailures: 0,
  penalty: 0,
  routable: true,
  notRoutableCode: '',
  notRoutableReason: '',
  ...over,
});

const view = (over: Partial<ClusterStatusView>): ClusterStatusView => ({
  ready: true,
  unavailableReason: '',
  nowMs: 100_000,
  initialized: true,
  watchDisconnectedAtMs: 0,
  registryPrefixes: ['/blockx/workers/'],
  limits: null,
  workers: [],
  ...over,
});

describe('renderStatus', () => {
  it('renders one row per worker: slots, load, breaker, heartbeat age, routable or why not', () => {
    const text = renderStatus(
      '127.0.0.1:8080',
      view({
        workers: [
          worker({}),
          worker({
            workerAddr: 'w:2',
            registryPrefix: '',
            breakerState: 'open',
            breakerOpenUntilMs: 104_000,
            consecutiveFailures: 3,
            routable: false,
            notRoutableReason: 'circuit breaker open for 4.0 s more (3 consecutive failures)',
            codeVersion: '0123456789abcdef',
            codeVersionError:
              'refused version fedcba9876543210: hash mismatch; still serving 0123456789abcdef',
          }),
        ],
      }),
    );
    expect(text.split('\n')).toEqual([
      'coordinator 127.0.0.1:8080: ready · 2 worker(s), 1 routable',
      'registry: /blockx/workers/',
      'WORKER  REGISTRY                 SLOTS  RESERVED  RUNNING  FREE  CPU  MEM  ERRORS  BREAKER                   HEARTBEAT  CODE                ROUTABLE',
      'w:1     legacy /blockx/workers/  8      1         2        5     25%  50%  0%      closed                    0.2s ago   -                   yes',
      'w:2     -                        8      1         2        5     25%  50%  0%      open 4.0s more (3 fails)  0.2s ago   0123456789abcdef !  no: circuit breaker open for 4.0 s more (3 consecutive failures)',
      '! w:2 code: refused version fedcba9876543210: hash mismatch; still serving 0123456789abcdef',
      '',
    ]);
  });

  it('says when the coordinator is not ready and has no workers', () => {
    expect(
      renderStatus(
        'c:1',
        view({ ready: false, unavailableReason: 'worker view not initialized', registryPrefixes: [] }),
      ),
    ).toBe('coordinator c:1: NOT READY (worker view not initialized) · 0 worker(s)\nno workers\n');
  });
});

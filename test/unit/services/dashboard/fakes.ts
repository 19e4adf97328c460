// Fakes of the dashboard handler's ports (src/services/dashboard/adapters/dashboard-handler.ts): a
// DashboardSource the test pushes snapshots through, and a response that records what was written.
import type { WorkerStatusView } from '../../../../src/contracts/cluster-status.js';
import type {
  BackfillJobView,
  DashboardSnapshot,
  FollowJobView,
  DashboardSource,
  RecentTaskView,
} from '../../../../src/contracts/dashboard.js';
import type { DashboardResponse } from '../../../../src/services/dashboard/adapters/dashboard-handler.js';

export class FakeSource implements DashboardSource {
  readonly listeners = new Set<(s: DashboardSnapshot) => void>();
  failWith: Error | undefined;
  constructor(public current: DashboardSnapshot) {}
  snapshot(): DashboardSnapshot {
    if (this.failWith) throw this.failWith;
    return this.current;
  }
  onSnapshot(listener: (s: DashboardSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  push(s: DashboardSnapshot): void {
    this.current = s;
    for (const l of this.listeners) l(s);
  }
}

export class FakeResponse implements DashboardResponse {
  status = 0;
  headers: Record<string, string | number> = {};
  readonly chunks: string[] = [];
  ended = false;
  destroyed = false;
  writableNeedDrain = false;
  private readonly handlers = new Map<string, Array<() => void>>();

  writeHead(status: number, headers: Record<string, string | number>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  write(chunk: string): boolean {
    if (this.ended) throw new Error('write after end');
    this.chunks.push(chunk);
    return !this.writableNeedDrain;
  }
  end(chunk?: string | Buffer): this {
    if (chunk !== undefined) this.chunks.push(chunk.toString());
    this.ended = true;
    return this;
  }
  once(event: 'close' | 'drain', listener: () => void): this {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), listener]);
    return this;
  }
  emit(event: 'close' | 'drain'): void {
    const list = this.handlers.get(event) ?? [];
    this.handlers.delete(event);
    for (const l of list) l();
  }
  destroy(): this {
    this.destroyed = true;
    this.emit('close');
    return this;
  }
  body(): string {
    return this.chunks.join('');
  }
  /** The `data:` of every `snapshot` event written, parsed. */
  events(): DashboardSnapshot[] {
    return [...this.body().matchAll(/^event: snapshot\ndata: (.*)$/gm)].map(
      (m) => JSON.parse(m[1] as string) as DashboardSnapshot,
    );
  }
}

export function worker(addr: string, extra: Partial<WorkerStatusView> = {}): WorkerStatusView {
  return {
    workerAddr: addr,
    taskSlots: 8,
    reservedSlots: 1,
    runningTasks: 2,
    cpuPercent: 0.25,
    memoryPercent: 0.5,
    memoryAvailableBytes: 1_000,
    memoryTotalBytes: 2_000,
    processRssBytes: 300,
    errorRate: 0,
    lastHeartbeatMs: 1_000,
    freeSlots: 5,
    heartbeatAgeMs: 100,
    consecutiveFailures: 0,
    penalty: 0,
    routable: true,
    registryPrefix: '/blockx/workers/',
    registryFormat: 'legacy',
    breakerState: 'closed',
    breakerOpenUntilMs: 0,
    notRoutableCode: '',
    notRoutableReason: '',
    ...extra,
  };
}

export function task(taskId: string, extra: Partial<RecentTaskView> = {}): RecentTaskView {
  return {
    taskId,
    workerAddr: '127.0.0.1:1',
    state: 'SUCCEEDED',
    startedAtMs: 1_000,
    endedAtMs: 1_250,
    durationMs: 250,
    builder: 'CallListCallConfig',
    failureCode: '',
    failureMessage: '',
    codeVersion: '',
    ...extra,
  };
}

export function snapshotAt(atMs: number, extra: Partial<DashboardSnapshot> = {}): DashboardSnapshot {
  return {
    atMs,
    cluster: {
      ready: true,
      unavailableReason: '',
      nowMs: atMs,
      initialized: true,
      watchDisconnectedAtMs: 0,
      registryPrefixes: ['/blockx/workers/'],
      limits: {
        heartbeatTimeoutMs: 10_000,
        watchGracePeriodMs: 10_000,
        slotTtlMs: 5_000,
        maxCandidates: 3,
        circuitBreakerThreshold: 3,
        circuitBreakerCooldownMs: 10_000,
        cpuRedLine: 0.9,
        memoryRedLine: 0.9,
        errorRateRedLine: 0.5,
      },
      workers: [worker('127.0.0.1:7001')],
    },
    throughput: [{ atMs: atMs - 5_000, bucketMs: 5_000, succeeded: 3, failed: 1 }],
    recentTasks: [task('t-1')],
    backfills: [],
    followJobs: [],
    ...extra,
  };
}

export function followJob(jobId: string, extra: Partial<FollowJobView> = {}): FollowJobView {
  return {
    jobId,
    kind: 'follow',
    chainId: 1,
    state: 'running',
    runner: 'host pid 42',
    term: 3,
    head: 30,
    finalized: 25,
    lagBlocks: 2,
    lagSeconds: 24,
    reorgs: 1,
    deepestReorg: 3,
    lastReorg: { atMs: 900, ancestor: 27, depth: 3, oldTip: '0xold', newTip: '0xnew' },
    lastError: null,
    updatedMs: 950,
    restarts: 0,
    ...extra,
  };
}

export function backfillJob(jobId: string, extra: Partial<BackfillJobView> = {}): BackfillJobView {
  return {
    jobId,
    run: 'r',
    per: 'block',
    fromBlock: 1,
    toBlock: 10,
    units: 10,
    succeeded: 1,
    failed: 0,
    skipped: 0,
    inFlight: 1,
    startedAtMs: 1,
    updatedAtMs: 2,
    finished: false,
    ...extra,
  };
}

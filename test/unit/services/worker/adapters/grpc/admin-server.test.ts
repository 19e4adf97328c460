// WorkerAdminService handlers (src/services/worker/adapters/grpc/admin-server.ts) against a real RecentTasks
// ring fed through RecentTasksRecorder's orchestrator hooks: the wire page, the instance id, a refused
// cursor, and nothing of the task input on the wire.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { ListRecentTasksResponse } from '../../../../../../src/generated/proto/blockx/worker/v1/ListRecentTasksResponse.js';
import {
  RecentTasksRecorder,
  workerAdminServiceHandlers,
} from '../../../../../../src/services/worker/adapters/grpc/admin-server.js';
import { silentLogger } from '../../../../../../src/kernel/observability/service-logger.js';
import { TaskState } from '../../../../../../src/services/worker/core/index.js';

/** A client certificate as grpc-js hands it over: a CN, and roles as URI names (none: a submitter). */
const certOf = (cn: string, roles: string[] = []) => ({
  subject: { CN: cn },
  fingerprint256: `fp-${cn}-${roles.join('-')}`,
  subjectaltname: roles.map((r) => `URI:urn:blockx:role:${r}`).join(', '),
});

function call(afterSeq: number, limit = 0, cert?: ReturnType<typeof certOf>) {
  let out: { err: Partial<grpc.ServiceError> | null; res?: ListRecentTasksResponse } | undefined;
  const handlers = workerAdminServiceHandlers({
    recent: recorder.tasks,
    workerInstance: 'inst-1',
    now: () => 9_999,
    logger: silentLogger,
    serving: () => {
      throw new Error('not asked here');
    },
  });
  (handlers.ListRecentTasks as unknown as (c: unknown, cb: (e: unknown, r?: unknown) => void) => void)(
    {
      request: { afterSeq, limit },
      metadata: new grpc.Metadata(),
      ...(cert === undefined ? {} : { getAuthContext: () => ({ sslPeerCertificate: cert }) }),
    },
    (err, res) =>
      (out = { err: err as Partial<grpc.ServiceError> | null, res: res as ListRecentTasksResponse }),
  );
  return out!;
}

let now = 1_000;
const recorder = new RecentTasksRecorder(() => now);
recorder.onTaskAdmitted({ taskId: 'a', builder: 'CallListCallConfig', acceptedAtMs: 1_000 });
recorder.onTaskAdmitted({ taskId: 'b', builder: 'CallListCallConfig', acceptedAtMs: 1_001, client: 'alice' });
now = 1_500;
recorder.onTerminal('a', TaskState.SUCCEEDED, {
  success: true,
  executeResult: { failureCode: '', retryable: false, failureMessage: '', pluginResults: [] },
  codeVersion: 'abc',
});
recorder.onTerminal('b', TaskState.FAILED, {
  success: false,
  executeResult: {
    failureCode: 'CALL_FAILED',
    retryable: false,
    failureMessage: 'boom',
    pluginResults: [],
  },
});

describe('WorkerAdminService.ListRecentTasks', () => {
  it('answers the page with the counters, the instance and the clock', () => {
    const { err, res } = call(0);
    expect(err).toBeNull();
    expect(res).toMatchObject({
      lastSeq: 4,
      succeededTotal: 1,
      failedTotal: 1,
      workerInstance: 'inst-1',
      nowMs: 9_999,
      truncated: false,
    });
    expect(res?.tasks?.map((t) => [t.taskId, t.state, t.startedAtMs, t.endedAtMs, t.codeVersion])).toEqual([
      ['b', 'FAILED', 1_001, 1_500, ''],
      ['a', 'SUCCEEDED', 1_000, 1_500, 'abc'],
    ]);
  });

  it("names each task's submitter to a caller that sees every client; a submitter sees its own, unnamed", () => {
    for (const cert of [undefined, certOf('vera', ['viewer']), certOf('node-1', ['coordinator'])]) {
      expect(call(0, 0, cert).res?.tasks?.map((t) => [t.taskId, t.client])).toEqual([
        ['b', 'alice'],
        ['a', ''],
      ]);
    }
    const own = call(0, 0, certOf('alice')).res?.tasks ?? [];
    expect(own.map((t) => t.taskId)).toEqual(['b']);
    expect(own[0]).not.toHaveProperty('client');
    expect(call(0, 0, certOf('mallory')).res?.tasks).toEqual([]);
  });

  it('moves only what changed after the cursor', () => {
    expect(call(3).res?.tasks?.map((t) => t.taskId)).toEqual(['b']);
    expect(call(4).res?.tasks).toEqual([]);
  });

  it.each([-1, 1.5, Number.NaN])('refuses the cursor %s with INVALID_ARGUMENT', (afterSeq) => {
    expect(call(afterSeq).err?.code).toBe(grpc.status.INVALID_ARGUMENT);
  });
});

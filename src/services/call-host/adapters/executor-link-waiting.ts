// Serving a `callWaiting` request through the link's `onWaiting` handler (executor-link.ts; the events
// and their guarantees are docs/executor.md, "The Worker's API"). If the handler returns a promise, its
// outcome goes back to the call as a ResumeCall; a handler that throws or rejects answers with an `io`
// error the call can handle. A handler that returns undefined leaves the request to whoever handles
// `callWaiting` events.

import type { ExecutorLinkOptions, ResumeOutcome, WaitingRequest } from './executor-link-types.js';

/** Offer `req` to `handler`; `resume` carries its answer back (ExecutorLink#resumeCall). */
export function serveWaiting(
  handler: ExecutorLinkOptions['onWaiting'],
  req: WaitingRequest,
  resume: (callId: string, attempt: number, outcome: ResumeOutcome) => void,
): void {
  if (!handler) return;
  let pending: Promise<ResumeOutcome> | undefined;
  try {
    pending = handler(req);
  } catch (err) {
    pending = Promise.reject(err);
  }
  if (!pending) return;
  pending.then(
    (outcome) => resume(req.callId, req.attempt, { ...outcome, requestId: req.requestId }),
    (err: unknown) => {
      const e = err as { message?: string; retryable?: unknown; code?: unknown } | undefined;
      resume(req.callId, req.attempt, {
        requestId: req.requestId,
        ok: false,
        error: {
          message: e?.message ?? String(err),
          kind: 'io',
          retryable: e?.retryable === true,
          ...(typeof e?.code === 'string' ? { code: e.code } : {}),
        },
      });
    },
  );
}

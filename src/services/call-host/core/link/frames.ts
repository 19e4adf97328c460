// The link core's records and the pure translations it makes (link-core.ts): a connection's state, an
// in-flight attempt, the handshake's verdict on a first frame, and executor frames → link events.

import type {
  CallCompletedMessage,
  CallFailedMessage,
  CallFailureKind,
  CallStartedMessage,
} from '../../../../executor/protocol.js';
import type { ConnId } from './commands.js';
import type { AttemptFields, ExecuteCallCommand, ExecutorLinkEvent } from './types.js';

export interface Conn {
  readonly id: ConnId;
  /** Its first frame was a Hello with the spawn secret: only then may it be `current`. */
  authenticated: boolean;
  hello: boolean;
  ready: boolean;
  closed: boolean;
  pid: number | undefined;
  executorVersion: string;
  threads: number;
  lastHeartbeatAtMs: number;
  readonly sentEpochs: Set<string>;
  /** Refused at this time unless it authenticated by then. */
  helloDeadline: number | undefined;
}

export interface Inflight extends AttemptFields {
  /** The connection the ExecuteCall went out on; undefined while queued in the link. */
  conn: Conn | undefined;
  readonly command: ExecuteCallCommand;
  /** Open request ids, oldest first. */
  waits: number[] | undefined;
}

/** A connection just opened; its hello deadline is set by the core (LinkState.setHelloDeadline). */
export function newConn(id: ConnId, now: number): Conn {
  return {
    id,
    authenticated: false,
    hello: false,
    ready: false,
    closed: false,
    pid: undefined,
    executorVersion: '',
    threads: 0,
    lastHeartbeatAtMs: now,
    sentEpochs: new Set(),
    helloDeadline: undefined,
  };
}

/**
 * Why a connection's first frame does not authenticate it (undefined: it does): it must be a Hello
 * carrying the current spawn secret (none once it has been used).
 */
export function firstFrameRefusal(
  m: { readonly type: string; readonly secret?: unknown },
  expectedSecret: string | undefined,
): string | undefined {
  if (m.type !== 'Hello')
    return `its first frame is ${JSON.stringify(String(m.type).slice(0, 40))}, not Hello`;
  if (typeof m.secret !== 'string' || m.secret === '') return 'its Hello carries no secret';
  if (expectedSecret === undefined || !constantTimeEqual(m.secret, expectedSecret))
    return 'its Hello carries a wrong or already used secret';
  return undefined;
}

export function startedEvent(entry: AttemptFields, m: CallStartedMessage): ExecutorLinkEvent {
  return {
    type: 'callStarted',
    taskId: entry.taskId,
    callId: m.callId,
    attempt: m.attempt,
    elapsedMs: m.elapsedMs ?? 0,
  };
}

/** `frameBytes`: the CallCompleted frame's size, which stands in for the value's (no second serialisation). */
export function terminalEvent(
  entry: AttemptFields,
  m: CallCompletedMessage | CallFailedMessage,
  frameBytes: number,
): ExecutorLinkEvent {
  const { taskId } = entry;
  const { callId, attempt } = m;
  if (m.type === 'CallCompleted')
    return {
      type: 'callCompleted',
      taskId,
      callId,
      attempt,
      value: m.value ?? null,
      durationMs: m.durationMs,
      outputBytes: frameBytes,
      ...ioHitsOf(m),
    };
  return {
    type: 'callFailed',
    taskId,
    callId,
    attempt,
    kind: m.kind,
    retryable: m.retryable,
    message: m.message,
    ...(m.stack !== undefined ? { stack: m.stack } : {}),
    ...(m.code !== undefined ? { code: m.code } : {}),
    ...ioHitsOf(m),
  };
}

export function failedEvent(
  entry: AttemptFields,
  kind: CallFailureKind,
  retryable: boolean,
  message: string,
) {
  const { taskId, callId, attempt } = entry;
  return { type: 'callFailed', taskId, callId, attempt, kind, retryable, message } as const;
}

/** `{ioHits}` of a terminal frame when it reports a positive whole number of copy hits, else `{}`. */
function ioHitsOf(m: { readonly ioHits?: number }): { ioHits?: number } {
  const hits = m.ioHits;
  return typeof hits === 'number' && Number.isInteger(hits) && hits > 0 ? { ioHits: hits } : {};
}

/** String equality in time that depends on the length only (the secret is compared with it). */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

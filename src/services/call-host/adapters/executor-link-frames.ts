// The hand-written JSON of the two hottest frames the executor link sends (executor-link.ts; the protocol
// is docs/executor.md). Each is the same JSON as the frame object, written as text so that what every
// call of a task shares is serialised once (frozen-json.ts). Both throw what JSON.stringify throws.

import type { ExecuteCallCommand } from './executor-link-types.js';
import { jsonOf } from './frozen-json.js';

/**
 * ExecuteCall, the hottest line of the link: the block every call of a task shares is serialised once
 * (frozen-json.ts), the rest per call. Same JSON as the ExecuteCall object.
 */
export function executeCallJson(c: ExecuteCallCommand): string {
  const block = c.block === undefined || c.block === null ? '' : `,"block":${jsonOf(c.block)}`;
  return (
    `{"type":"ExecuteCall","taskId":${JSON.stringify(c.taskId)},"callId":${JSON.stringify(c.callId)}` +
    `,"attempt":${c.attempt},"function":${JSON.stringify(c.function)},"args":${JSON.stringify(c.args)}` +
    `${block},"codeEpoch":${JSON.stringify(c.codeEpoch)},"budgetMs":${c.budgetMs}` +
    `${c.ioCache === undefined ? '' : `,"ioCache":${JSON.stringify(c.ioCache)}`}}`
  );
}

/** A successful ResumeCall: a cached row goes to every call that reads it, its text is taken once. */
export function resumeOkJson(callId: string, attempt: number, requestId: number, value: unknown): string {
  return (
    `{"type":"ResumeCall","callId":${JSON.stringify(callId)},"attempt":${attempt}` +
    `,"requestId":${requestId},"ok":true,"value":${jsonOf(value)}}`
  );
}

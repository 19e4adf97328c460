// The outbound side of an execution thread (call-runner-thread.ts): events and log lines are batched and
// posted to the main thread once per event-loop turn, with a beat on every batch out (thread-messages.ts).

import type { MessagePort } from 'node:worker_threads';
import type { LogLevel } from './call-context.js';
import type { LogFields } from './sdk.js';
import {
  beat,
  monoMs,
  type ThreadEvent,
  type ThreadSignals,
  type ThreadToMainBatch,
} from './thread-messages.js';

export const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50 };

export function newBatch(ready: boolean): ThreadToMainBatch {
  return { ready, kinds: [], keys: [], frames: [], logs: [] };
}

export class ThreadOutbox {
  private out = newBatch(false);
  private flushScheduled = false;
  private readonly flush = (): void => {
    this.flushScheduled = false;
    const out = this.out;
    if (out.kinds.length === 0 && out.logs.length === 0 && !out.ready) return;
    const batch = out;
    this.out = newBatch(false);
    beat(this.signals, monoMs());
    this.port.postMessage(batch);
  };

  constructor(
    private readonly port: MessagePort,
    private readonly signals: ThreadSignals,
    private readonly threadIndex: number,
    private readonly minLevel: number,
  ) {}

  emit(kind: ThreadEvent, key: string, frame: string): void {
    this.out.kinds.push(kind);
    this.out.keys.push(key);
    this.out.frames.push(frame);
    this.scheduleFlush();
  }

  emitLog(level: LogLevel, msg: string, fields: LogFields): void {
    if (LEVELS[level] < this.minLevel) return;
    let line: string;
    try {
      line = JSON.stringify({ level, time: Date.now(), thread: this.threadIndex, ...fields, msg });
    } catch {
      line = JSON.stringify({ level, time: Date.now(), thread: this.threadIndex, msg });
    }
    this.out.logs.push(line);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flush);
  }
}

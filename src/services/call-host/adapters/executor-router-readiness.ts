// Readiness of a Worker with one executor per function language (docs/executor.md § Python functions
// on a Worker): ready when every executor it needs is ready; the loss of any one closes admissions until
// it is back (the orchestrator counts each loss as a restart, as with one executor).
//
// An executor that becomes needed while the Worker runs (the first `.py` function appeared) does not
// close admissions while it starts: its calls wait in its link, unstarted, so no budget runs, and the
// Worker's other functions keep serving. Its first `ready` is then just one more `ready`.

import { ManualExecutorReadiness } from '../../worker/adapters/default-ports.js';
import type { FunctionLanguage } from '../../worker/core/functions-inventory.js';
import type { ExecutorReadiness, ExecutorReadinessEvent } from '../../worker/adapters/ports.js';

export class ExecutorSetReadiness implements ExecutorReadiness {
  private readonly manual = new ManualExecutorReadiness(false);
  private readonly needed = new Set<FunctionLanguage>(['js']);
  private readonly up = new Set<FunctionLanguage>();

  /** Languages whose executors the Worker runs now (JS always). */
  get languages(): readonly FunctionLanguage[] {
    return [...this.needed];
  }

  /** Whether every needed executor is ready. */
  get ready(): boolean {
    for (const l of this.needed) if (!this.up.has(l)) return false;
    return true;
  }

  subscribe(listener: (event: ExecutorReadinessEvent) => void): () => void {
    return this.manual.subscribe(listener);
  }

  /** The Worker runs an executor for `language` from now on. */
  need(language: FunctionLanguage): void {
    this.needed.add(language);
  }

  executorReady(language: FunctionLanguage): void {
    this.up.add(language);
    if (this.ready) this.manual.markReady();
  }

  executorLost(language: FunctionLanguage, reason: string): void {
    this.up.delete(language);
    this.manual.markLost(`${language === 'js' ? 'executor' : `${language} executor`} lost: ${reason}`);
  }
}

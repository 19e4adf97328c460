// Shared by test/integration/executor/*.test.ts and the executor tests of test/process: a real executor
// process (from src/ under tsx) behind an ExecutorSupervisor, with helpers to run a call and wait for
// events. Not a test file itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EpochSource } from '../../../src/executor/code-epochs.js';
import type {
  ExecuteCallCommand,
  ExecutorLinkEvent,
  ResumeOutcome,
  WaitingRequest,
} from '../../../src/services/call-host/adapters/executor-link.js';
import {
  ExecutorSupervisor,
  tsxExecutorCommand,
  type ExecutorSupervisorOptions,
} from '../../../src/services/call-host/adapters/executor-supervisor.js';

export const FIXTURE_FUNCTIONS = fileURLToPath(new URL('../../fixtures/functions/', import.meta.url)).replace(
  /\/$/,
  '',
);
export const REPO_FUNCTIONS = fileURLToPath(new URL('../../../functions/', import.meta.url)).replace(
  /\/$/,
  '',
);

export type Terminal = Extract<ExecutorLinkEvent, { type: 'callCompleted' | 'callFailed' }>;

export interface HarnessOptions extends Partial<Omit<ExecutorSupervisorOptions, 'onEvent' | 'socketPath'>> {
  readonly functionsDir: string;
  readonly epochs?: EpochSource;
  readonly onWaiting?: (req: WaitingRequest) => Promise<ResumeOutcome> | undefined;
  /** Extra event hook (runs after the harness recorded the event). */
  readonly onEvent?: (ev: ExecutorLinkEvent, h: ExecutorHarness) => void;
}

export class ExecutorHarness {
  readonly events: ExecutorLinkEvent[] = [];
  readonly logs: string[] = [];
  readonly supervisor: ExecutorSupervisor;
  readonly dir: string;
  private readonly terminals = new Map<string, (ev: Terminal) => void>();
  private waiters: { check: () => boolean; resolve: () => void }[] = [];
  private nextId = 0;

  constructor(options: HarnessOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'bx-exec-'));
    this.supervisor = new ExecutorSupervisor({
      command: tsxExecutorCommand(),
      threads: 2,
      heartbeatIntervalMs: 100,
      onLog: (line) => this.logs.push(line),
      ...options,
      socketPath: join(this.dir, 'executor.sock'),
      onEvent: (ev) => {
        this.events.push(ev);
        if (ev.type === 'callCompleted' || ev.type === 'callFailed') {
          const key = `${ev.callId}#${ev.attempt}`;
          const resolve = this.terminals.get(key);
          this.terminals.delete(key);
          resolve?.(ev);
        }
        options.onEvent?.(ev, this);
        this.waiters = this.waiters.filter((w) => (w.check() ? (w.resolve(), false) : true));
      },
    });
  }

  get link() {
    return this.supervisor.link;
  }

  async start(): Promise<this> {
    await this.supervisor.start();
    await this.supervisor.whenReady();
    return this;
  }

  async stop(): Promise<void> {
    await this.supervisor.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Execute a call and resolve with its terminal event. */
  run(command: Partial<ExecuteCallCommand> & { function: string; codeEpoch: string }): Promise<Terminal> {
    const full: ExecuteCallCommand = {
      taskId: 'task-1',
      callId: `call-${this.nextId++}`,
      attempt: 1,
      args: [],
      budgetMs: 5_000,
      ...command,
    };
    return new Promise((resolve) => {
      this.terminals.set(`${full.callId}#${full.attempt}`, resolve);
      this.link.executeCall(full);
    });
  }

  /** Resolves once `check` holds (re-checked on every event). */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  count(type: ExecutorLinkEvent['type']): number {
    return this.events.filter((e) => e.type === type).length;
  }
}

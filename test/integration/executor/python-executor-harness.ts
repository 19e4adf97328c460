// The Python executor behind a real ExecutorLink (executor-harness.ts with the command of
// src/executor/python-command.ts), and epoch snapshots of directories that hold `.py` files. Not a test
// file itself.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { computeEpochId, type EpochSnapshot, type EpochSource } from '../../../src/executor/code-epochs.js';
import { parseFunctionFileName } from '../../../src/executor/core/function-resolution.js';
import { pythonExecutorCommand } from '../../../src/executor/python-command.js';
import { ExecutorHarness, type HarnessOptions } from './executor-harness.js';

export const PY_FIXTURES = fileURLToPath(
  new URL('../../fixtures/python-functions/', import.meta.url),
).replace(/\/$/, '');
export const PY_EXAMPLES = fileURLToPath(
  new URL('../../../examples/python-functions/', import.meta.url),
).replace(/\/$/, '');

/** The interpreter the tests use: `BLOCKX_PYTHON`, else `python3` (as the Worker resolves it). */
export const PYTHON_COMMAND = pythonExecutorCommand();

/** A function file name in either language (the Worker's rule: `.py` names may not start with `__`). */
function functionName(fileName: string): string | null {
  if (fileName.endsWith('.py')) {
    const name = fileName.slice(0, -3);
    return /^(?!__)[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? name : null;
  }
  return parseFunctionFileName(fileName)?.name ?? null;
}

/** Epoch snapshots taken by hand (`take(dir)`), served to the link as DefineEpoch. */
export class SnapshotEpochs implements EpochSource {
  private readonly snapshots = new Map<string, EpochSnapshot>();
  readonly retired: string[] = [];
  private readonly listeners = new Set<(epoch: string) => void>();

  /** Snapshot `dir` as it is now; returns the epoch id (a content hash, as the Worker's code view). */
  take(dir: string): string {
    const snap = snapshotOf(dir);
    this.snapshots.set(snap.id, snap);
    return snap.id;
  }

  snapshot(epoch: string): EpochSnapshot | undefined {
    return this.snapshots.get(epoch);
  }

  onRetire(listener: (epoch: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** What the code view does when no task pins an epoch any more: the link sends RetireEpoch. */
  retire(epoch: string): void {
    this.snapshots.delete(epoch);
    this.retired.push(epoch);
    for (const l of this.listeners) l(epoch);
  }
}

/** The snapshot of `dir` as it is now (not registered anywhere). */
export function snapshotOf(dir: string): EpochSnapshot {
  const files = readdirSync(dir)
    .filter((f) => functionName(f) !== null && statSync(join(dir, f)).isFile())
    .sort()
    .map((fileName) => ({
      name: functionName(fileName)!,
      fileName,
      source: readFileSync(join(dir, fileName), 'utf8'),
    }));
  return { id: computeEpochId(files), functionsDir: dir, files };
}

/** An ExecutorHarness whose executor is the Python one. */
export function pythonHarness(options: HarnessOptions): ExecutorHarness {
  return new ExecutorHarness({ command: PYTHON_COMMAND, ...options });
}

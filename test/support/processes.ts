// Child-process tracking for tests. Every process a test spawns goes through `spawnTracked`, which starts
// it in its own process group (`detached: true`) so that killing `-pid` takes the whole tree down (a shell,
// `runuser`, or a CLI that forks workers). Whatever is still alive when the test worker exits is killed by
// an `exit` hook, so a failed `afterAll` cannot leave servers running after the vitest run.
import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const tracked = new Set<ChildProcess>();
let hooksInstalled = false;

/** Spawn `cmd` in a new process group and track it until it exits. stdio defaults to `ignore, pipe, pipe`. */
export function spawnTracked(cmd: string, args: readonly string[], opts: SpawnOptions = {}): ChildProcess {
  installExitHooks();
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts, detached: true });
  if (child.pid === undefined) {
    // spawn failed (ENOENT, EACCES): the 'error' event follows; nothing to track.
    return child;
  }
  tracked.add(child);
  child.once('exit', () => tracked.delete(child));
  return child;
}

/** True while the child has neither exited nor been reaped. */
export function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** Send `signal` to the child's whole process group (falls back to the child alone). Never throws. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Resolve once the child has exited (immediately if it already has). */
export function waitForExit(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Stop a child's process group: `signal` first, SIGKILL if it is still alive after `graceMs`.
 * Resolves when the child has exited.
 */
export async function stopGroup(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 5_000,
): Promise<void> {
  if (!isRunning(child)) {
    // The leader may be gone while others in its group live on; make sure of them.
    signalGroup(child, 'SIGKILL');
    return;
  }
  const exited = waitForExit(child);
  signalGroup(child, signal);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
  });
  const outcome = await Promise.race([exited.then(() => 'exited' as const), timedOut]);
  clearTimeout(timer);
  // SIGKILL the group either way: children of the leader may outlive it.
  signalGroup(child, 'SIGKILL');
  if (outcome === 'timeout') await exited;
}

/** SIGKILL every tracked process group. Synchronous so it can run from an `exit` hook. */
export function killAllTracked(): void {
  for (const child of tracked) signalGroup(child, 'SIGKILL');
  tracked.clear();
}

/** How many tracked children are still alive (for leak assertions in tests). */
export function trackedCount(): number {
  return tracked.size;
}

/** Keep the last `maxChars` characters of a child's stdout and stderr (interleaved) for error messages. */
export interface OutputTail {
  text(): string;
}

export function captureOutput(child: ChildProcess, maxChars = 16_000): OutputTail {
  let buffer = '';
  const onData = (chunk: Buffer | string): void => {
    buffer += chunk.toString();
    if (buffer.length > maxChars * 2) buffer = buffer.slice(-maxChars);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return { text: () => buffer.slice(-maxChars) };
}

/**
 * Resolve with the first line of stdout or stderr matching `pattern`. Rejects if the child exits first or
 * `timeoutMs` passes; the error carries the output seen so far.
 */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const partial = { stdout: '', stderr: '' };
    let seen = '';
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onStdout);
      child.stderr?.off('data', onStderr);
      child.off('close', onClose);
      child.off('error', onError);
    };
    const feed = (stream: 'stdout' | 'stderr', chunk: Buffer | string): void => {
      const lines = (partial[stream] + chunk.toString()).split('\n');
      partial[stream] = lines.pop() ?? '';
      for (const line of lines) {
        seen = (seen + line + '\n').slice(-8_000);
        if (pattern.test(line)) {
          cleanup();
          resolve(line);
          return;
        }
      }
    };
    const onStdout = (chunk: Buffer | string): void => feed('stdout', chunk);
    const onStderr = (chunk: Buffer | string): void => feed('stderr', chunk);
    // 'close' rather than 'exit': it fires after the stdio streams are drained, so no line is missed.
    const onClose = (code: number | null, signal: NodeJS.Signals | null): void => {
      cleanup();
      const last = [partial.stdout, partial.stderr].find((line) => pattern.test(line));
      if (last !== undefined) {
        resolve(last);
        return;
      }
      const tail = partial.stdout + partial.stderr;
      reject(
        new Error(
          `process exited (code ${code}, signal ${signal}) before printing ${pattern}; output:\n${seen}${tail}`,
        ),
      );
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${pattern}; output:\n${seen}`));
    }, timeoutMs);
    child.stdout?.on('data', onStdout);
    child.stderr?.on('data', onStderr);
    child.once('close', onClose);
    child.once('error', onError);
  });
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllTracked);
  // A signal would otherwise end this process without running 'exit' hooks. Kill the children, then let
  // the signal take its default course if nobody else handles it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAllTracked();
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** How many processes of `uid` on this host have exited and wait to be reaped (zombies), from /proc. */
export function zombiesOf(uid: number): number {
  const uidLine = new RegExp(`^Uid:\\s+${uid}\\s`, 'm');
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const status = readFileSync(`/proc/${p}/status`, 'utf8');
        return /^State:\s+Z/m.test(status) && uidLine.test(status);
      } catch {
        return false; // gone meanwhile
      }
    }).length;
}

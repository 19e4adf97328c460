// Isolation between tasks on one execution thread (`executor.isolation: task`; docs/security.md, "Task
// isolation"). Runs once per thread, after the runner's own modules loaded and before any function does:
//
//  1. SES `lockdown()`: every JavaScript intrinsic (Object.prototype, Array.prototype, Function, Promise,
//     JSON, …) and the host's Buffer is frozen, so one task cannot change what another's `{}` inherits.
//     The tamings keep Node's behaviour: real V8 stacks and source maps (errorTaming unsafe-debug: with
//     'unsafe', SES installs its own Error.prepareStackTrace, which skips Node's source maps, so a
//     TypeScript function's frames named lines of the compiled JavaScript), console and
//     locale methods as they are, `eval` as is, and no SES handlers for uncaught errors (the runner has
//     its own). `overrideTaming: 'min'`: assigning `obj.toString`, `fn.toString`, `err.name` on an
//     object that inherits the frozen property still works (the "override mistake"); other inherited
//     names (`obj.valueOf = …`, `obj.constructor = …`) need `Object.defineProperty`. Not 'moderate':
//     it turns Promise.prototype.constructor into an accessor, which takes every `await` off V8's fast
//     path (measured: ~+2-4 µs per no-op call in a thread, 0.82× of none on bench/calls; 'min' is
//     within noise).
//  2. The global object is frozen: no new globals (`globalThis.stash = …` throws in a module, which is
//     strict code) and no replaced ones. Node installs some globals lazily (a getter that redefines the
//     property on first use, undici's dispatcher on the first `fetch`): they are all touched first.
//
//  3. A function cannot signal its own Executor from JavaScript: `process.kill` aimed at this process,
//     any of its threads (a signal sent to a thread id is delivered to its whole process), its process
//     group, every process it may signal (0, -1) or the Worker fails with EPERM, as a kernel refusal
//     would (guardSignals below). In a worker thread that is the only way JavaScript reaches the whole
//     process: `process.exit` and `process.reallyExit` end the thread alone, `process.abort` throws.
//     What is left (a child process the function starts, a native addon it loads) is in docs/security.md.
//
// The module instance per task, one instance of a function's module per task that calls it on the thread, lives in
// call-runner-thread.ts. What stays shared (process, process.env, built-in modules' objects, state in
// the modules a function imports) is listed in docs/security.md.

import { readdirSync, readFileSync } from 'node:fs';

/** libuv's EPERM, what `process._kill` returns when the kernel refuses (process.kill then throws it). */
const UV_EPERM = -1;

/** This process's group id, from /proc/self/stat (field 5, after the parenthesised command name). */
function ownProcessGroup(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    return Number.isSafeInteger(pgrp) && pgrp > 0 ? pgrp : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` (as kill(2) reads it) reaches this process or the Worker that supervises it. */
export function aimsAtExecutor(
  pid: number,
  own: { readonly pid: number; readonly ppid: number; readonly pgid: number | undefined },
  threadIds: () => readonly string[],
): boolean {
  if (pid === 0 || pid === -1 || pid === own.pid || pid === own.ppid || pid === -own.pid) return true;
  if (own.pgid !== undefined && pid === -own.pgid) return true;
  return pid > 0 && threadIds().includes(String(pid));
}

/**
 * Makes `process._kill` (which `process.kill` calls) refuse with EPERM a signal aimed at this Executor
 * (see the header, item 3); signal 0 (a liveness probe) and any other target pass. The property is made
 * read-only and non-configurable, so a function can neither restore nor replace it.
 */
export function guardSignals(): void {
  const rawKill = (process as unknown as { _kill: (pid: number, sig: number) => number })._kill;
  const own = { pid: process.pid, ppid: process.ppid, pgid: ownProcessGroup() };
  const threadIds = (): string[] => {
    try {
      return readdirSync('/proc/self/task');
    } catch {
      return [];
    }
  };
  Object.defineProperty(process, '_kill', {
    value: (pid: number, sig: number): number =>
      sig !== 0 && aimsAtExecutor(pid, own, threadIds) ? UV_EPERM : rawKill.call(process, pid, sig),
    writable: false,
    configurable: false,
    enumerable: false,
  });
}

export async function isolateThread(): Promise<void> {
  guardSignals();
  await import('ses');
  for (const key of Reflect.ownKeys(globalThis)) {
    try {
      void (globalThis as Record<PropertyKey, unknown>)[key];
    } catch {
      // a getter that throws installs nothing
    }
  }
  // fetch loads undici on its first call, which adds its dispatcher to the global object: an invalid URL
  // makes it load and reject without any network access.
  await fetch('').catch(() => undefined);
  lockdown({
    errorTaming: 'unsafe-debug',
    errorTrapping: 'none',
    unhandledRejectionTrapping: 'none',
    stackFiltering: 'verbose',
    overrideTaming: 'min',
    consoleTaming: 'unsafe',
    localeTaming: 'unsafe',
    domainTaming: 'unsafe',
    evalTaming: 'unsafe-eval',
    reporting: 'none',
  });
  Object.freeze(globalThis);
}

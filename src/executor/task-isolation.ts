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
// The third part, one instance of a function's module per task that calls it on the thread, lives in
// call-runner-thread.ts. What stays shared (process, process.env, built-in modules' objects, state in
// the modules a function imports) is listed in docs/security.md.

export async function isolateThread(): Promise<void> {
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

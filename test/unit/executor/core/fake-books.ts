// A thread's books as the pool starts them (ready, idle, nothing sent), for the executor core tests.
import type { ThreadBooks } from '../../../../src/executor/core/pool-calls.js';

/** An idle, ready thread's books with `extra` fields (a test's name for it, its beat age, …). */
export function idleThread<C, X extends object>(extra: X): ThreadBooks<C> & X {
  return {
    ready: true,
    dead: false,
    draining: false,
    running: 0,
    cancelling: 0,
    sentSeq: 0,
    calls: new Set<C>(),
    ...extra,
  };
}

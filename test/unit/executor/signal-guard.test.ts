// Which kill(2) targets reach the Executor (aimsAtExecutor, src/executor/task-isolation.ts): the table of
// what the execution thread's process.kill refuses with EPERM.
import { describe, expect, it } from 'vitest';
import { aimsAtExecutor } from '../../../src/executor/task-isolation.js';

const own = { pid: 500, ppid: 100, pgid: 500 };
const threads = () => ['500', '501', '507'];

describe('aimsAtExecutor', () => {
  it.each([
    [500, true, 'the Executor itself'],
    [501, true, 'one of its threads'],
    [507, true, 'another of its threads'],
    [-500, true, 'its process group'],
    [0, true, "the caller's group"],
    [-1, true, 'every process it may signal'],
    [100, true, 'the Worker'],
    [502, false, 'another process (a child it started)'],
    [-502, false, "a child's own group"],
    [-501, false, 'the negative of a thread id (a group that is not its own)'],
  ])('%i → %s (%s)', (pid, refused) => {
    expect(aimsAtExecutor(pid, own, threads)).toBe(refused);
  });

  it('a group other than its pid (not started detached) is refused too', () => {
    expect(aimsAtExecutor(-42, { ...own, pgid: 42 }, threads)).toBe(true);
    expect(aimsAtExecutor(-42, { ...own, pgid: undefined }, threads)).toBe(false);
  });
});

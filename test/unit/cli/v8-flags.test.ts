import { describe, expect, it } from 'vitest';
import { CLI_INTERRUPT_BUDGET, SERVICE_COMMANDS, selfV8Flags } from '../../../src/cli/v8-flags.js';

const BUDGET = `--interrupt-budget=${CLI_INTERRUPT_BUDGET}`;

describe('selfV8Flags', () => {
  it.each([
    { args: ['backfill', 'task.json', '--from', '1', '--to', '9'], execArgv: [], want: [BUDGET] },
    { args: ['submit', 'tasks.jsonl', '--json'], execArgv: [], want: [BUDGET] },
    { args: ['ingest', '--from', '1'], execArgv: [], want: [BUDGET] },
    { args: ['--version'], execArgv: [], want: [BUDGET] },
    { args: [], execArgv: [], want: [BUDGET] },
    // Services keep V8's defaults: they run for days.
    { args: ['up', '--workers', '2'], execArgv: [], want: [] },
    { args: ['worker'], execArgv: [], want: [] },
    { args: ['coordinator', '--listen', '127.0.0.1:0'], execArgv: [], want: [] },
    { args: ['executor'], execArgv: [], want: [] },
    { args: ['--json', 'up'], execArgv: [], want: [] },
    // A budget given to node itself wins.
    { args: ['backfill', 't.json'], execArgv: ['--interrupt-budget=1000'], want: [] },
    { args: ['backfill', 't.json'], execArgv: ['--inspect'], want: [BUDGET] },
  ])('blockx $args (node $execArgv) → $want', ({ args, execArgv, want }) => {
    expect(selfV8Flags(args, execArgv)).toEqual(want);
  });

  it('names the services that start a long-running process', () => {
    expect([...SERVICE_COMMANDS].sort()).toEqual(['coordinator', 'executor', 'up', 'worker']);
  });

  it('raises the budget above V8’s default of 67,584 bytes', () => {
    expect(CLI_INTERRUPT_BUDGET).toBe(8 * 67_584);
  });
});

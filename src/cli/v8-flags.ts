// The V8 flags a `blockx` process sets for itself before it loads the rest of the CLI (bin/blockx.js
// applies them with v8.setFlagsFromString, before dist/cli/main.js is imported).
//
// A one-shot command (anything but a service) lets V8 optimise a function later than V8's default does:
// CLI_INTERRUPT_BUDGET bytes of bytecode run per tier-up check, 8 times Node 20's default of 67,584. A
// short-lived client spent about 30 % of its CPU in the optimising compiler, on start-up code that runs a
// few times (perf of `blockx backfill`); with the larger budget its hot per-task paths are still optimised
// within a job. A service runs for days, so V8's own tuning is left alone there (docs/performance.md §
// The client's start and V8's optimising compiler).

/** Bytecode bytes between V8's tier-up checks in a one-shot command (`--interrupt-budget`). */
export const CLI_INTERRUPT_BUDGET = 540_672;

/** The commands that run a service: they keep V8's defaults. */
export const SERVICE_COMMANDS: ReadonlySet<string> = new Set(['up', 'worker', 'coordinator', 'executor']);

/**
 * The flags for a process started as `blockx ARGS` (`args`: argv after the script) under node's own
 * `execArgv`. The command is the first argument that is not an option; misreading it (an option's value
 * first) only leaves V8's default. A flag given on node's command line wins.
 */
export function selfV8Flags(args: readonly string[], execArgv: readonly string[]): string[] {
  const command = args.find((a) => !a.startsWith('-'));
  if (command !== undefined && SERVICE_COMMANDS.has(command)) return [];
  if (execArgv.some((a) => a.startsWith('--interrupt-budget'))) return [];
  return [`--interrupt-budget=${CLI_INTERRUPT_BUDGET}`];
}

// `blockx executor --socket PATH`: normally spawned and supervised by its Worker, which passes every
// setting. main() dispatches it before commander parses anything (a fast start matters on every
// restart), after `withExecutorDefaults` filled in the config table's default for each flag not given:
// the Executor itself has no defaults (src/executor/executor-settings.ts). The help declaration below
// exists so that `blockx --help` and `blockx executor --help` document it, with the table's defaults.
import type { Command } from 'commander';
import {
  EXECUTOR_SETTING_FLAGS,
  executorSettingArgs,
  type ExecutorSettings,
} from '../../executor/executor-settings.js';
import { configField, defaultText } from '../../kernel/config-fields/index.js';
import { TOP_LEVEL_DEFAULTS, defaultExecutorConfig } from '../../kernel/config-defaults.js';

const given = (argv: readonly string[], flag: string) =>
  argv.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));

/**
 * `argv` with `--functions-dir` (BLOCKX_FUNCTIONS_DIR, else the table's `functions.dir`) and each setting
 * of executor-settings.ts it does not name appended, at the table's default.
 */
export function withExecutorDefaults(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const table = defaultExecutorConfig();
  const settings = executorSettingArgs(table);
  const missing: string[] = [];
  for (let i = 0; i < settings.length; i += 2) {
    if (!given(argv, (settings[i] as string).slice(2)))
      missing.push(settings[i] as string, settings[i + 1] as string);
  }
  const functionsDir = given(argv, 'functions-dir')
    ? []
    : ['--functions-dir', env.BLOCKX_FUNCTIONS_DIR || TOP_LEVEL_DEFAULTS.functions.dir];
  return [...argv, ...functionsDir, ...missing];
}

const DESCRIPTIONS: Readonly<Record<keyof ExecutorSettings, string>> = {
  threads: 'execution threads',
  heartbeatIntervalMs: 'heartbeat period to the Worker',
  cancelHardLimitMs: 'a cancelled call still running after this loses its thread',
  maxCallsPerThread: 'calls running at once on one thread',
  readCopyMaxEntries: 'rows of read copies each thread keeps (0: none)',
  isolation: 'task | none: isolation between tasks on a thread',
  threadHeapMb: "one thread's V8 heap limit",
  threadMemoryMb: 'heap + off-heap MiB one thread may hold (0: unchecked)',
  maxRssMb: 'process RSS above which the largest thread is terminated (0: unchecked)',
};

export function registerExecutorHelp(program: Command): void {
  const command = program
    .command('executor')
    .description('run an Executor process (normally spawned by its Worker, which passes every flag)')
    .requiredOption('--socket <path>', "the Worker's Unix socket to connect to (at most 107 bytes)")
    .option(
      '--functions-dir <dir>',
      `function modules (default: BLOCKX_FUNCTIONS_DIR or ${TOP_LEVEL_DEFAULTS.functions.dir})`,
    );
  for (const [key, { flag }] of Object.entries(EXECUTOR_SETTING_FLAGS)) {
    const field = configField('executor', key);
    command.option(
      `--${flag} <value>`,
      `${DESCRIPTIONS[key as keyof ExecutorSettings]} (default ${defaultText(field)}: executor.${key})`,
    );
  }
  command.option(
    '--secret-fd <n>',
    "read the Worker's per-spawn secret from this file descriptor, then close it (the Worker passes 3; see docs/security.md)",
  );
}

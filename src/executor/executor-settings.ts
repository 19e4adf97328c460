// The settings an Executor runs with, and their flags. Every value comes from the config field table
// (`deployments.<name>.executor`, docs/configuration.md): the Worker's supervisor passes each one on the
// command line of every Executor it spawns (JS and Python alike), and a standalone `blockx executor`
// gets the ones not given from the CLI layer, which reads the table. The Executor keeps no default of
// its own: a setting missing from its command line is a usage error (exit 2), never a silent value.
import type { ExecutorConfig } from '../kernel/config-types.js';

/** The fields of `deployments.<name>.executor` an Executor process itself runs with. */
export type ExecutorSettings = Pick<
  ExecutorConfig,
  | 'threads'
  | 'heartbeatIntervalMs'
  | 'cancelHardLimitMs'
  | 'maxCallsPerThread'
  | 'readCopyMaxEntries'
  | 'isolation'
  | 'threadHeapMb'
  | 'threadMemoryMb'
  | 'maxRssMb'
>;

type Parse = (flag: string, text: string) => ExecutorSettings[keyof ExecutorSettings];

const positive: Parse = (flag, text) => {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n <= 0)
    throw new Error(`--${flag} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
};
const whole: Parse = (flag, text) => {
  if (!/^\d+$/.test(text))
    throw new Error(`--${flag} must be a whole number >= 0, got ${JSON.stringify(text)}`);
  return Number(text);
};
const isolation: Parse = (flag, text) => {
  if (text !== 'task' && text !== 'none')
    throw new Error(`--${flag} must be task or none, got ${JSON.stringify(text)}`);
  return text;
};

/** One row per setting: its flag and how the flag's text is read. Row order is the order on the command line. */
export const EXECUTOR_SETTING_FLAGS: Readonly<
  Record<keyof ExecutorSettings, { flag: string; parse: Parse }>
> = {
  threads: { flag: 'threads', parse: positive },
  heartbeatIntervalMs: { flag: 'heartbeat-interval-ms', parse: positive },
  cancelHardLimitMs: { flag: 'cancel-hard-limit-ms', parse: positive },
  maxCallsPerThread: { flag: 'max-calls-per-thread', parse: positive },
  readCopyMaxEntries: { flag: 'read-copy-max-entries', parse: whole },
  isolation: { flag: 'isolation', parse: isolation },
  threadHeapMb: { flag: 'thread-heap-mb', parse: positive },
  threadMemoryMb: { flag: 'thread-memory-mb', parse: whole },
  maxRssMb: { flag: 'max-rss-mb', parse: whole },
};

const SETTING_KEYS = Object.keys(EXECUTOR_SETTING_FLAGS) as (keyof ExecutorSettings)[];

/** The settings as flags, every one of them: `--threads 2 --heartbeat-interval-ms 500 …`. */
export function executorSettingArgs(settings: ExecutorSettings): string[] {
  return SETTING_KEYS.flatMap((key) => [`--${EXECUTOR_SETTING_FLAGS[key].flag}`, String(settings[key])]);
}

/** The flags' texts (as `node:util` parseArgs gives them) read as settings; each one is required. */
export function parseExecutorSettings(values: Readonly<Record<string, unknown>>): ExecutorSettings {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const { flag, parse } = EXECUTOR_SETTING_FLAGS[key];
    const text = values[flag];
    if (typeof text !== 'string')
      throw new Error(
        `--${flag} is required: the Worker passes every setting; by hand, run \`blockx executor\`, which fills in the config table's defaults (docs/executor.md § Defaults)`,
      );
    out[key] = parse(flag, text);
  }
  return out as unknown as ExecutorSettings;
}

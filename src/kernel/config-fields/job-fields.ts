// The rows of `jobs.<name>`: a follow job `blockx jobs run NAME` runs (docs/follow.md § Jobs in the
// config). Row order is the order of the keys in the resolved config, the schema and docs/configuration.md.
import type { ConfigField, ConfigGroup } from './field.js';

const NON_NEGATIVE = { t: 'int', min: 0 } as const;
const j = (row: Omit<ConfigField, 'section'>): ConfigField => ({ section: 'job', ...row });

export const JOB_GROUPS: readonly ConfigGroup[] = [
  {
    section: 'job',
    path: '',
    description:
      'A job `blockx jobs run NAME` runs: a task template from a first block, kept current as the chain moves (docs/follow.md).',
    typeName: 'JobConfig',
  },
];

export const JOB_FIELDS: readonly ConfigField[] = [
  j({
    path: 'template',
    type: { t: 'string', minLength: 1 },
    description:
      'The task template (a task JSON file whose builder and writer carry a block selector), relative to the config file; required to run.',
  }),
  j({
    path: 'from',
    type: NON_NEGATIVE,
    default: 0,
    description: 'The first block of the job.',
  }),
  j({
    path: 'finality',
    type: NON_NEGATIVE,
    default: 64,
    description: 'Blocks at or below head − finality are final; a change to one stops the job.',
  }),
  j({
    path: 'pollIntervalMs',
    type: { t: 'int', min: 1 },
    default: 1000,
    description: 'How often the blocks table is read once the job is caught up.',
  }),
  j({
    path: 'restartInitialBackoffMs',
    type: { t: 'int', min: 1 },
    default: 1000,
    description:
      'When `blockx up` or `blockx jobs run` supervises the job: the wait before restarting a runner that failed; it doubles with each failure in a row.',
  }),
  j({
    path: 'restartMaxBackoffMs',
    type: { t: 'int', min: 1 },
    default: 60000,
    description:
      'The longest wait before a restart; a run that lasted at least this long starts a new row of failures.',
  }),
];

// Defaults of every config field, read from the one table of fields (kernel/config-fields/, listed in
// docs/configuration.md). A field the user omits takes the value here; the schema, the README and
// docs/configuration.md name the same numbers because they are generated from the same rows.
import { sectionDefaults } from './config-fields/index.js';
import type {
  BlockxConfig,
  CoordinatorConfig,
  DeploymentKind,
  ExecutorConfig,
  SourceConfig,
  JobConfig,
  WorkerConfig,
} from './config-types.js';

export function defaultCoordinatorConfig(kind: DeploymentKind): CoordinatorConfig {
  return sectionDefaults('coordinator', kind) as unknown as CoordinatorConfig;
}

/** `runTasks.maxInFlight` has no default: unset, each RunTasks stream grants the worker's taskSlots. */
export function defaultWorkerConfig(kind: DeploymentKind): WorkerConfig {
  return sectionDefaults('worker', kind) as unknown as WorkerConfig;
}

export function defaultExecutorConfig(): ExecutorConfig {
  return sectionDefaults('executor') as unknown as ExecutorConfig;
}

/** The fields of a `jobs.<name>` entry that have defaults (template has none). */
export function defaultJobConfig(): JobConfig {
  return sectionDefaults('job') as unknown as JobConfig;
}

/** The fields of a `sources.<name>` entry that have defaults (rpcUrl, fallbackUrl and chainId have none). */
export function defaultSourceConfig(): SourceConfig {
  return sectionDefaults('source') as unknown as SourceConfig;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? Mutable<T[K]> : T[K] };
export type TopLevelDefaults = Mutable<
  Pick<BlockxConfig, 'tls' | 'registry' | 'storage' | 'functions' | 'plugins' | 'observability' | 'up'>
>;

/** Top-level defaults (everything except deployments and tables, which have no meaningful default). */
export const TOP_LEVEL_DEFAULTS: TopLevelDefaults = sectionDefaults('top') as unknown as TopLevelDefaults;

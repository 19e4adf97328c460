// The resolved BlockX configuration: what `loadConfig` returns after parsing, validation, env overrides,
// defaults and cross-field rules. Every field is present (defaults filled in) and the object is frozen.
// The file form (what users write) is the same shape with every field optional except `version`
// and each deployment's `kind`. The section types are generated from the config field table
// (kernel/config-fields/, docs/configuration.md); tables and deployments, maps by name, are declared here.
import type {
  AdmissionConfig,
  CallRetryConfig,
  CoordinatorConfig,
  ExecutorConfig,
  RunTasksConfig,
  SourceConfig,
  JobConfig,
  FunctionRetryConfig,
  WorkerConfig,
} from './config-fields/generated/deployment-sections.js';
import type {
  FunctionsConfig,
  IoRetryConfig,
  ObservabilityConfig,
  PluginsConfig,
  RegistryConfig,
  StorageConfig,
  TlsConfig,
  UpConfig,
} from './config-fields/generated/top-level-sections.js';

export type {
  AdmissionConfig,
  CallRetryConfig,
  CoordinatorConfig,
  ExecutorConfig,
  FunctionRetryConfig,
  FunctionsConfig,
  IoRetryConfig,
  ObservabilityConfig,
  PluginsConfig,
  RegistryConfig,
  RunTasksConfig,
  SourceConfig,
  JobConfig,
  StorageConfig,
  TlsConfig,
  UpConfig,
  WorkerConfig,
};

export type DeploymentKind = 'block' | 'bundle';
export type ColumnType = 'integer' | 'bigint' | 'real' | 'text' | 'boolean' | 'json' | 'bytes';
export type LogLevel = ObservabilityConfig['logLevel'];

export interface ColumnConfig {
  readonly type: ColumnType;
  readonly nullable: boolean;
}

export interface TableConfig {
  readonly description?: string;
  readonly columns: Readonly<Record<string, ColumnConfig>>;
  readonly primaryKey: readonly string[];
  readonly blockColumn?: string;
  readonly chainColumn?: string;
  /** The block hash column (text): several blocks can share a height; the hash picks one. */
  readonly blockHashColumn?: string;
  /**
   * Whether tasks (writers, through the task IO scope) may write this table. `loadConfig` fills in
   * false when the file leaves it out; absent in an in-process config means false too. Chain data loaded
   * by `blockx data load|generate` is not a task write. docs/storage.md, "Which tables tasks may write".
   */
  readonly writable?: boolean;
}

export interface DeploymentConfig {
  readonly name: string;
  readonly kind: DeploymentKind;
  readonly coordinator: CoordinatorConfig;
  readonly worker: WorkerConfig;
  readonly executor: ExecutorConfig;
}

export interface BlockxConfig {
  readonly version: 1;
  /** Absolute path of the config file; empty when built from defaults alone. */
  readonly configFile: string;
  /** Folder relative paths are resolved against (the config file's folder). */
  readonly baseDir: string;
  /**
   * TLS and mutual authentication (docs/security.md § TLS and authentication): on when ca, cert and key
   * are all set (absolute paths after resolution), off when all are empty.
   */
  readonly tls: TlsConfig;
  readonly registry: RegistryConfig;
  readonly storage: StorageConfig;
  /**
   * `dir` is absolute after resolution. `retry`: how calls of a function are retried, by function name,
   * where it differs from the deployment's worker.callRetry (docs/retries.md § Call level); empty when
   * the file sets none.
   */
  readonly functions: FunctionsConfig & { readonly retry: Readonly<Record<string, FunctionRetryConfig>> };
  /** `dirs` are absolute after resolution. */
  readonly plugins: PluginsConfig;
  readonly tables: Readonly<Record<string, TableConfig>>;
  readonly observability: ObservabilityConfig;
  readonly up: UpConfig;
  readonly deployments: Readonly<Record<string, DeploymentConfig>>;
  /** `sources.<name>`: the nodes `blockx ingest --source NAME` reads (docs/ingest.md); defaults filled in. */
  readonly sources: Readonly<Record<string, SourceConfig>>;
  /** `jobs.<name>`: the jobs `blockx jobs run NAME` runs (docs/follow.md); defaults filled in. */
  readonly jobs: Readonly<Record<string, JobConfig>>;
}

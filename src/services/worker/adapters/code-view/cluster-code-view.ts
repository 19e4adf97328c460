// The cluster code view: a Worker with `functions.source: cluster` serves the version deployed with
// `blockx functions deploy` instead of its local folder (docs/functions-deploy.md § On a Worker).
//
// It is a code view like FunctionCodeView (src/executor/code-epochs.ts) — epochs are pinned per task,
// held in memory while current or pinned, retired with `onRetire` — fed from the functions store:
//
//   - every `pollMs` (FUNCTIONS_POLL_MS) it reads the small current pointer; when it names a version
//     other than the one served, it fetches that bundle and verifies it (bundle.ts: its files must hash
//     to the version and the pointer's digest). A verified bundle becomes current: new tasks pin it,
//     tasks already running keep the epoch they pinned. So a Worker picks up a deploy within
//     pollMs + one fetch.
//   - a bundle that fails verification (tampered, corrupt, missing) is refused: logged as an error, the
//     Worker keeps serving its previous version, and `status()` carries the reason (heartbeat field
//     `codeVersionError`, shown by `blockx status`). It is tried again with backoff (up to
//     MAX_RETRY_BACKOFF_MS), since a redeploy repairs a damaged bundle.
//   - while etcd cannot be read, the served version stays and the error says so.
//   - before any version has been fetched, a task's pin fails (ACTIVATION_FAILED) naming the reason.
//
// Module URLs of a deployed epoch are under `functionsDir` (the Worker's functions.dir), which is where
// bare imports (node_modules) resolve from; the function text itself always comes from the bundle.

import { MAX_CODE_VERSION_ERROR_CHARS } from '../../../../contracts/heartbeat.js';
import { PinnedEpochs } from '../../../../executor/code-epochs.js';
import type { Bundle } from '../../../functions-store/bundle.js';
import { FunctionsStoreError, FunctionsStoreErrorCode } from '../../../functions-store/errors.js';
import type { CurrentPointer } from '../../../functions-store/store-keys.js';
import { parseAnyFunctionFileName } from '../../../../executor/core/functions-inventory.js';
import { silentLogger, type ServiceLogger } from '../../../../kernel/observability/service-logger.js';

/** How often a Worker reads the current pointer. The pickup bound is this plus one bundle fetch. */
export const FUNCTIONS_POLL_MS = 1_000;
/** The longest pause between retries of a version that could not be fetched or verified. */
export const MAX_RETRY_BACKOFF_MS = 30_000;

/** What the view needs of the store (FunctionsStore satisfies it). */
export interface ClusterCodeSource {
  current(): Promise<CurrentPointer | undefined>;
  fetch(pointer: { version: string; digest?: string }): Promise<Bundle>;
}

/** What a heartbeat says about the code (heartbeat fields codeVersion / codeVersionError). */
export interface CodeVersionStatus {
  readonly version?: string;
  readonly error?: string;
}

export interface ClusterCodeViewOptions {
  readonly source: ClusterCodeSource;
  readonly functionsDir: string;
  readonly pollMs?: number;
  readonly logger?: ServiceLogger;
  /** Milliseconds clock for the retry backoff (tests). */
  readonly clock?: () => number;
  /**
   * Throws for a fetched bundle this Worker may not run (a cluster with a CA: trustedBundleCheck,
   * docs/functions-deploy.md § Signed deploys); the bundle is then refused like a tampered one.
   */
  readonly check?: (bundle: Bundle) => void;
}

export class ClusterCodeView extends PinnedEpochs {
  private readonly source: ClusterCodeSource;
  private readonly functionsDir: string;
  private readonly pollMs: number;
  private readonly logger: ServiceLogger;
  private readonly clock: () => number;
  private readonly check: (bundle: Bundle) => void;
  private error: string | undefined;
  private failure: { key: string; count: number; retryAtMs: number } | undefined;
  private polling: Promise<void> | undefined;
  private firstPoll: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: ClusterCodeViewOptions) {
    super();
    this.source = options.source;
    this.functionsDir = options.functionsDir;
    this.pollMs = options.pollMs ?? FUNCTIONS_POLL_MS;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? Date.now;
    this.check = options.check ?? ((): void => {});
  }

  /** Fetches the current version once, then polls every pollMs until close(). */
  start(): Promise<void> {
    this.firstPoll ??= this.poll();
    if (this.timer === undefined && !this.closed) {
      this.timer = setInterval(() => void this.poll(), this.pollMs);
      this.timer.unref();
    }
    return this.firstPoll;
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at the current pointer (and a fetch when it moved). Concurrent calls share one look. */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  /** What the heartbeat reports. */
  status(): CodeVersionStatus {
    return {
      ...(this.current === undefined ? {} : { version: this.current }),
      ...(this.error === undefined ? {} : { error: oneLine(this.error) }),
    };
  }

  async currentEpoch(): Promise<string> {
    if (this.current === undefined) await (this.firstPoll ?? this.poll());
    if (this.current !== undefined) return this.current;
    throw new FunctionsStoreError(
      FunctionsStoreErrorCode.NO_DEPLOYMENT,
      `functions.source is cluster and this worker has no deployed version to run: ${this.error ?? 'none yet'}`,
    );
  }

  private async pollOnce(): Promise<void> {
    if (this.closed) return;
    let pointer: CurrentPointer | undefined;
    try {
      pointer = await this.source.current();
    } catch (err) {
      this.setError(`cannot read the deployed version: ${messageOf(err)}`, 'warn');
      return;
    }
    if (pointer === undefined) {
      this.setError(
        'no functions version has been deployed to this cluster (blockx functions deploy DIR)',
        'warn',
      );
      return;
    }
    if (pointer.version === this.current) {
      this.clearError();
      return;
    }
    const key = `${pointer.version}/${pointer.digest}`;
    const now = this.clock();
    if (this.failure?.key === key && now < this.failure.retryAtMs) return;
    let bundle: Bundle;
    try {
      bundle = await this.source.fetch(pointer);
      this.check(bundle);
    } catch (err) {
      const count = this.failure?.key === key ? this.failure.count + 1 : 1;
      const backoff = Math.min(this.pollMs * 2 ** (count - 1), MAX_RETRY_BACKOFF_MS);
      this.failure = { key, count, retryAtMs: now + backoff };
      const code = (err as { code?: string }).code;
      const refused =
        code === FunctionsStoreErrorCode.BUNDLE_TAMPERED ||
        code === FunctionsStoreErrorCode.BUNDLE_CORRUPT ||
        code === FunctionsStoreErrorCode.BUNDLE_UNTRUSTED;
      const keeping = this.current === undefined ? 'no version to run yet' : `still serving ${this.current}`;
      this.setError(
        // What is served comes first: the heartbeat keeps MAX_CODE_VERSION_ERROR_CHARS of it.
        `${refused ? 'refused' : 'cannot fetch'} version ${pointer.version} (${keeping}): ${messageOf(err)}`,
        'error',
      );
      return;
    }
    if (this.closed) return;
    this.install(bundle);
  }

  private install(bundle: Bundle): void {
    const previous = this.makeCurrent({
      id: bundle.version,
      functionsDir: this.functionsDir,
      files: bundle.files.map((f) => ({
        name: parseAnyFunctionFileName(f.fileName)?.name ?? f.fileName,
        fileName: f.fileName,
        source: f.source,
      })),
    });
    this.failure = undefined;
    this.clearError();
    this.logger.info(
      {
        component: 'functions',
        version: bundle.version,
        previous: previous ?? null,
        files: bundle.files.length,
      },
      previous === undefined
        ? 'serving deployed functions version'
        : 'switched to deployed functions version (new tasks)',
    );
  }

  private setError(message: string, level: 'warn' | 'error'): void {
    if (this.error === message) return;
    this.error = message;
    this.logger[level]({ component: 'functions', version: this.current ?? null }, message);
  }

  private clearError(): void {
    this.error = undefined;
  }
}

/** Heartbeat-safe: one line, no control characters, at most MAX_CODE_VERSION_ERROR_CHARS. */
function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').slice(0, MAX_CODE_VERSION_ERROR_CHARS);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

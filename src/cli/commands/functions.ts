// `blockx functions deploy [DIR] | list | use VERSION`: one deployed code version for every Worker of a
// cluster (docs/functions-deploy.md). The command talks to etcd itself (`--etcd`, else the config's
// registry.etcd.endpoints / ETCD_ENDPOINTS), where the versions and the current pointer live and where
// Workers with `functions.source: cluster` look for them; without etcd, to the coordinator of
// `blockx up`, which holds the versions of its in-process cluster (functions-backends.ts).
//
//   deploy [DIR]   bundle DIR's function files (default functions.dir), store it under its content hash,
//                  make it current; prints the version
//   list           the kept versions (id, files, bytes, deployed at, current) and which Workers run which
//                  (their heartbeats' codeVersion)
//   use VERSION    make a kept version current again (a unique prefix of at least 4 hex digits)
//
// Exit 0 on success; 1 when the store refused the operation (too large, unknown version, a tampered
// bundle); 2 for usage, a config that cannot be loaded, or etcd that cannot be reached.
import path from 'node:path';
import type { Command } from 'commander';
import type { BlockxConfig } from '../../kernel/config-types.js';
import { FunctionsStoreErrorCode } from '../../services/functions-store/errors.js';
import type { VersionIndex } from '../../services/functions-store/version-index.js';
import type { WorkerCodeVersion } from '../../services/functions-store/worker-versions.js';
import { CONFIG_FLAG, EXIT, UsageError, type CliIo } from '../io.js';
import { renderTable } from '../table.js';
import { loadCliConfig } from './db.js';
import {
  coordinatorBackend,
  etcdBackend,
  StoreRefusal,
  type FunctionsBackend,
} from './functions-backends.js';
import { coordinatorAddressFromConfig } from './status.js';

interface CommonFlags {
  config?: string;
  etcd?: string;
  coordinator?: string;
  json?: boolean;
}

const ETCD_FLAG = [
  '--etcd <endpoints>',
  'etcd endpoints, comma-separated (default: registry.etcd.endpoints, ETCD_ENDPOINTS)',
] as const;
const VIA_COORDINATOR_FLAG = [
  '--coordinator <addr>',
  'without etcd: the `blockx up` coordinator holding the versions (default: COORDINATOR_LISTEN, else from the config)',
] as const;

export function registerFunctionsCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const functions = program
    .command('functions')
    .description('deploy the functions folder to the cluster, list deployed versions, switch versions');

  functions
    .command('deploy')
    .description('publish a functions folder as an immutable, content-addressed version and make it current')
    .argument('[dir]', 'the functions folder (default: functions.dir of the config)')
    .option(...CONFIG_FLAG)
    .option(...ETCD_FLAG)
    .option(...VIA_COORDINATOR_FLAG)
    .option('--json', 'print the outcome as JSON')
    .action(async (dir: string | undefined, opts: CommonFlags) =>
      setExit(await withStore(opts, io, 'deploy', (ctx) => deploy(ctx, dir))),
    );

  functions
    .command('list')
    .description('the kept versions and which workers run which')
    .option(...CONFIG_FLAG)
    .option(...ETCD_FLAG)
    .option(...VIA_COORDINATOR_FLAG)
    .option('--json', 'print the versions and workers as JSON')
    .action(async (opts: CommonFlags) => setExit(await withStore(opts, io, 'list', list)));

  functions
    .command('use')
    .description(
      'make a kept version current (roll forward or back); new tasks switch, running ones keep theirs',
    )
    .argument('<version>', 'a version id, or a unique prefix of at least 4 hex digits')
    .option(...CONFIG_FLAG)
    .option(...ETCD_FLAG)
    .option(...VIA_COORDINATOR_FLAG)
    .option('--json', 'print the outcome as JSON')
    .action(async (version: string, opts: CommonFlags) =>
      setExit(await withStore(opts, io, 'use', (ctx) => use(ctx, version))),
    );
}

interface StoreContext {
  readonly config: BlockxConfig;
  readonly backend: FunctionsBackend;
  readonly io: CliIo;
  readonly json: boolean;
}

/** Deadline of each coordinator call (deploy, use, list, status) when going through the coordinator. */
export const FUNCTIONS_RPC_TIMEOUT_MS = 10_000;

async function withStore(
  opts: CommonFlags,
  io: CliIo,
  sub: string,
  run: (ctx: StoreContext) => Promise<number>,
): Promise<number> {
  const config = await loadCliConfig(opts.config, io);
  const endpoints =
    opts.etcd !== undefined
      ? opts.etcd
          .split(',')
          .map((e) => e.trim())
          .filter((e) => e !== '')
      : opts.coordinator !== undefined
        ? []
        : config.registry.etcd.endpoints;
  if (opts.etcd !== undefined && endpoints.length === 0)
    throw new UsageError('--etcd needs at least one endpoint');
  let backend: FunctionsBackend;
  if (endpoints.length > 0) {
    backend = await etcdBackend(config, endpoints);
  } else {
    // No etcd: the cluster is `blockx up` with its in-process registry, whose coordinator holds the versions.
    const { dialAddress } = await import('../../client/address.js');
    const address = dialAddress(opts.coordinator ?? coordinatorAddressFromConfig(config, io.env));
    backend = await coordinatorBackend(config, address, FUNCTIONS_RPC_TIMEOUT_MS);
  }
  try {
    return await run({ config, backend, io, json: opts.json === true });
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as { code?: unknown }).code;
    if (err instanceof StoreRefusal || (typeof code === 'string' && STORE_CODES.has(code))) {
      io.stderr(`blockx functions ${sub}: ${code as string}: ${(err as Error).message}\n`);
      return EXIT.FAILED;
    }
    const details = (err as { details?: unknown }).details;
    const message =
      typeof details === 'string' && details !== '' ? details : ((err as Error)?.message ?? String(err));
    // A coordinator that answered, but holds no store (an etcd cluster: use --etcd).
    if (code === 9 /* FAILED_PRECONDITION */) {
      io.stderr(`blockx functions ${sub}: ${backend.where}: ${message}\n`);
      return EXIT.FAILED;
    }
    // Anything else is the backend not answering (down, wrong address, TLS, auth).
    const hint = backend.where.startsWith('etcd')
      ? ''
      : ' (no etcd is configured: blockx functions then talks to the coordinator of `blockx up`; pass --etcd for an etcd cluster)';
    io.stderr(`blockx functions ${sub}: cannot use ${backend.where}: ${message}${hint}\n`);
    return EXIT.UNREACHABLE;
  } finally {
    backend.close();
  }
}

const STORE_CODES: ReadonlySet<string> = new Set(Object.values(FunctionsStoreErrorCode));

async function deploy(ctx: StoreContext, dir: string | undefined): Promise<number> {
  const folder = dir === undefined ? ctx.config.functions.dir : path.resolve(ctx.io.cwd(), dir);
  const { readFunctionsFolder } = await import('../../services/functions-store/folder.js');
  const files = await readFunctionsFolder(folder);
  const { localImports } = await import('../../services/functions-store/local-imports.js');
  const { readdir } = await import('node:fs/promises');
  const unpinned = localImports(files, await readdir(folder).catch(() => []));
  const out = await ctx.backend.deploy(files);
  const e = out.entry;
  // Not an error (a helper may be installed on every machine on purpose), but never silent.
  for (const i of unpinned) {
    ctx.io.stderr(
      `blockx functions deploy: warning: ${i.fileName} imports ${i.specifier}, which the bundle does not ` +
        `carry: on workers it resolves from their own functions.dir, not from this version ` +
        `(docs/functions-deploy.md § What a bundle holds)\n`,
    );
  }
  if (ctx.json) {
    ctx.io.stdout(
      `${JSON.stringify({
        version: e.version,
        digest: e.digest,
        dir: folder,
        files: e.fileNames,
        sourceBytes: e.sourceBytes,
        storedBytes: e.storedBytes,
        deployedAtMs: e.deployedAtMs,
        current: true,
        changed: out.changed,
        newVersion: out.newVersion,
        previous: out.previous,
        pruned: out.pruned,
        localImports: unpinned,
      })}\n`,
    );
    return EXIT.OK;
  }
  const what = `${e.fileNames.length} file(s), ${e.sourceBytes} bytes, ${e.storedBytes} stored`;
  if (!out.changed) {
    ctx.io.stdout(`${e.version} is already the current version (${what}); nothing changed\n`);
  } else {
    ctx.io.stdout(
      `deployed ${e.version} from ${folder} (${what}); now current` +
        `${out.previous ? ` (was ${out.previous})` : ''}\n` +
        `workers with functions.source: cluster switch to it for new tasks; running tasks keep their version\n`,
    );
  }
  if (out.pruned.length > 0)
    ctx.io.stdout(`pruned (oldest beyond the kept history): ${out.pruned.join(', ')}\n`);
  return EXIT.OK;
}

async function list(ctx: StoreContext): Promise<number> {
  const { index, workers } = await ctx.backend.list();
  if (ctx.json) {
    ctx.io.stdout(`${JSON.stringify({ current: index.current, versions: index.versions, workers })}\n`);
    return EXIT.OK;
  }
  ctx.io.stdout(renderFunctionsList(index, workers));
  return EXIT.OK;
}

async function use(ctx: StoreContext, version: string): Promise<number> {
  const out = await ctx.backend.use(version);
  const e = out.entry;
  if (ctx.json) {
    ctx.io.stdout(
      `${JSON.stringify({ version: e.version, digest: e.digest, changed: out.changed, previous: out.previous })}\n`,
    );
    return EXIT.OK;
  }
  ctx.io.stdout(
    out.changed
      ? `now current: ${e.version} (was ${out.previous || 'none'}); new tasks switch to it, running tasks keep theirs\n`
      : `${e.version} is already the current version; nothing changed\n`,
  );
  return EXIT.OK;
}

/** The text form of `list`: versions newest first, then one row per Worker. */
export function renderFunctionsList(index: VersionIndex, workers: readonly WorkerCodeVersion[]): string {
  if (index.versions.length === 0 && workers.length === 0) {
    return 'no functions version deployed (blockx functions deploy DIR) and no workers registered\n';
  }
  const lines: string[] = [];
  if (index.versions.length === 0) {
    lines.push('no functions version deployed (blockx functions deploy DIR)');
  } else {
    const running = new Map<string, number>();
    for (const w of workers) running.set(w.codeVersion, (running.get(w.codeVersion) ?? 0) + 1);
    const rows = [...index.versions].reverse().map((v) => ({
      version: v.version,
      files: String(v.fileNames.length),
      bytes: String(v.sourceBytes),
      stored: String(v.storedBytes),
      deployed: new Date(v.deployedAtMs).toISOString(),
      current: v.version === index.current ? 'yes' : '',
      workers: String(running.get(v.version) ?? 0),
    }));
    const columns = ['version', 'files', 'bytes', 'stored', 'deployed', 'current', 'workers'] as const;
    lines.push(renderTable(columns, rows).trimEnd());
  }
  if (workers.length > 0) {
    const kept = new Set(index.versions.map((v) => v.version));
    const rows = workers.map((w) => ({
      worker: w.workerAddr,
      version: w.codeVersion || '-',
      source: w.codeVersion === '' ? '-' : kept.has(w.codeVersion) ? 'deployed' : 'local folder',
      status:
        w.codeVersionError || (w.codeVersion === index.current && index.current !== '' ? 'current' : ''),
    }));
    lines.push('', renderTable(['worker', 'version', 'source', 'status'] as const, rows).trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

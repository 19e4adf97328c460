// The function names a task may call, as the Workers will resolve them, for the pre-run checks of
// task-references.ts (`blockx validate`, `blockx submit`):
//   - `functions.source: local`: the files of the functions folder on this machine, as the executor
//     resolves them (src/executor/core/function-resolution.ts): `<name>.ts`, `.mjs`, `.js` at the top
//     level, and `<name>.py` (Python functions, docs/functions.md);
//   - `functions.source: cluster`: the files of the version deployed with `blockx functions deploy`
//     (docs/functions-deploy.md), read from where that command keeps it: etcd when the config names
//     endpoints, else the coordinator of `blockx up`.
// Undefined names mean "cannot be known here" (no folder on this machine, the store not answering): the
// check is skipped and the Worker decides.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { FUNCTION_NAME_PATTERN, parseFunctionFileName } from '../executor/core/function-resolution.js';
import type { BlockxConfig } from '../kernel/config-types.js';

/** Where a task's functions are looked up: the names (undefined: unknown here), for the message. */
export interface FunctionNames {
  readonly names: string[] | undefined;
  /** `…/functions`, or `the deployed version 1a2b…`, as the message shows it. */
  readonly dir: string;
  /** The config rule a missing function breaks. */
  readonly rule: 'functions.dir' | 'functions.source';
}

/** The function names of a list of file names (a folder's entries, a deployed version's files). */
export function functionNamesOf(fileNames: readonly string[]): string[] {
  const names = new Set<string>();
  for (const file of fileNames) {
    const parsed = parseFunctionFileName(file);
    if (parsed !== null) names.add(parsed.name);
    else if (file.endsWith('.py') && FUNCTION_NAME_PATTERN.test(file.slice(0, -3)))
      names.add(file.slice(0, -3));
  }
  return [...names];
}

/**
 * The names in `config.functions.dir`, or undefined when this machine cannot know them: the folder does
 * not exist here (a client submitting to a cluster on other machines), or functions come from the
 * cluster (`functionNamesFor` reads those).
 */
export function localFunctionNames(config: BlockxConfig): { dir: string; names: string[] | undefined } {
  const base = config.configFile ? path.dirname(config.configFile) : process.cwd();
  const dir = path.resolve(base, config.functions.dir);
  if (config.functions.source === 'cluster') return { dir, names: undefined };
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return { dir, names: undefined };
  }
  return { dir, names: functionNamesOf(entries) };
}

export interface FunctionNamesOptions {
  /** The coordinator of `blockx up` to ask when the config names no etcd (default: the config's). */
  readonly coordinator?: string;
  readonly env: NodeJS.ProcessEnv;
  /** How long the store may take to answer. */
  readonly timeoutMs: number;
}

/** The names a task may call where its Workers take functions from (the file's header). */
export async function functionNamesFor(
  config: BlockxConfig,
  opts: FunctionNamesOptions,
): Promise<FunctionNames> {
  if (config.functions.source !== 'cluster') return { ...localFunctionNames(config), rule: 'functions.dir' };
  const [{ etcdBackend, coordinatorBackend }, { coordinatorAddressFromConfig }, { dialAddress }] =
    await Promise.all([
      import('./commands/functions-backends.js'),
      import('./commands/status.js'),
      import('../client/address.js'),
    ]);
  const endpoints = config.registry.etcd.endpoints;
  let backend: Awaited<ReturnType<typeof etcdBackend>> | undefined;
  try {
    backend =
      endpoints.length > 0 && opts.coordinator === undefined
        ? await etcdBackend(config, endpoints)
        : await coordinatorBackend(
            config,
            dialAddress(opts.coordinator ?? coordinatorAddressFromConfig(config, opts.env)),
            opts.timeoutMs,
          );
    const current = await withTimeout(backend.current(), opts.timeoutMs);
    if (current === undefined) {
      return {
        names: [],
        dir: 'the cluster (no version deployed: blockx functions deploy)',
        rule: 'functions.source',
      };
    }
    return {
      names: functionNamesOf(current.fileNames),
      dir: `the deployed version ${current.version}`,
      rule: 'functions.source',
    };
  } catch {
    // Not answering (or no store there): the Worker decides at run time.
    return { names: undefined, dir: 'the deployed version', rule: 'functions.source' };
  } finally {
    backend?.close();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

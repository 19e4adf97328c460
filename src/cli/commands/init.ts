// `blockx init [DIR] [--force] [--json]`: a ready project outside this repository (docs/getting-started.md).
//
// Everything it writes comes from the installed package, never from the cwd: the skeleton in
// examples/init/ (config, tsconfig, README, the example writer plugin, a task file), the demo's TypeScript
// function (functions/erc20_transfers.ts) and the task files of examples/tasks/. The project's
// package.json is made here, depending on this package's version (`^VERSION`).
//
// DIR (default: the cwd) must be empty or absent; `--force` writes into a folder that is not, replacing the
// files of the same names, except package.json, which is merged: what it has stays, and only what is
// missing (type, the `blockx` dependency, the scripts) is added.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { packagePath, readPackageVersion } from '../../kernel/package-root.js';
import { EXIT, UsageError, type CliIo } from '../io.js';

interface InitOptions {
  force?: boolean;
  json?: boolean;
}

/** One file of the project: its path inside it and its text. */
export interface ProjectFile {
  readonly path: string;
  readonly text: string;
}

/** The skeleton folder inside the package. */
const SKELETON = ['examples', 'init'];

/** Files of the package copied under another name: project path → package path. */
const FROM_PACKAGE: Readonly<Record<string, readonly string[]>> = {
  'functions/erc20_transfers.ts': ['functions', 'erc20_transfers.ts'],
  'tasks/hello-world.json': ['examples', 'tasks', 'hello-world.json'],
  'tasks/transfers.json': ['examples', 'tasks', 'block-table-transfers.json'],
};

/** A skeleton file whose name npm would not pack as it is (npm drops or renames a `.gitignore`). */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

/** The commands to run after `init`, in DIR. */
export const NEXT_STEPS = ['npm install', 'npx blockx up --once'] as const;

export function registerInitCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('init [dir]')
    .description(
      'make a project: config, TypeScript and Python functions, an example writer plugin, task files',
    )
    .option(
      '--force',
      'write into a folder that is not empty (same-named files are replaced; package.json is merged)',
    )
    .option('--json', 'print what was written as JSON')
    .action((dir: string | undefined, opts: InitOptions) => setExit(init(dir, opts, io)));
}

function init(dir: string | undefined, opts: InitOptions, io: CliIo): number {
  const target = path.resolve(io.cwd(), dir ?? '.');
  if (existsSync(target) && !statSync(target).isDirectory())
    throw new UsageError(`${target} is a file, not a folder`);
  const present = existsSync(target) ? readdirSync(target) : [];
  if (present.length > 0 && !opts.force)
    throw new UsageError(
      `${target} is not empty (${present.length} entries); pass --force to write into it (files of the same names are replaced, package.json is merged)`,
    );
  const packageJsonPath = path.join(target, 'package.json');
  const existing = existsSync(packageJsonPath) ? readFileSync(packageJsonPath, 'utf8') : undefined;
  const files = projectFiles(path.basename(target), readPackageVersion(), existing);
  for (const file of files) {
    const to = path.join(target, file.path);
    mkdirSync(path.dirname(to), { recursive: true });
    writeFileSync(to, file.text);
  }
  // The folder as it was typed (DIR is resolved against the cwd, as `cd` would).
  const next = [...(target === io.cwd() ? [] : [`cd ${dir}`]), ...NEXT_STEPS];
  if (opts.json) {
    io.stdout(`${JSON.stringify({ dir: target, files: files.map((f) => f.path), next })}\n`);
    return EXIT.OK;
  }
  io.stdout(`blockx init: a project in ${target}\n`);
  for (const file of files) io.stdout(`  ${file.path}\n`);
  io.stdout(`next:\n${next.map((line) => `  ${line}\n`).join('')}`);
  return EXIT.OK;
}

/**
 * Every file of a new project named `name`, for BlockX `version`, sorted by path. `existingPackageJson` is
 * the text of a package.json already in the folder, merged rather than replaced.
 */
export function projectFiles(name: string, version: string, existingPackageJson?: string): ProjectFile[] {
  const files: ProjectFile[] = [
    ...skeletonFiles(packagePath(...SKELETON), ''),
    ...Object.entries(FROM_PACKAGE).map(([to, from]) => ({
      path: to,
      text: readFileSync(packagePath(...from), 'utf8'),
    })),
    { path: 'package.json', text: projectPackageJson(name, version, existingPackageJson) },
  ];
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function skeletonFiles(dir: string, prefix: string): ProjectFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const rel = `${prefix}${RENAMED[entry.name] ?? entry.name}`;
    const full = path.join(dir, entry.name);
    return entry.isDirectory()
      ? skeletonFiles(full, `${rel}/`)
      : [{ path: rel, text: readFileSync(full, 'utf8') }];
  });
}

/** npm's rules for a package name, loosely: lower case, no spaces, no leading dot or underscore. */
function packageNameOf(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name || 'blockx-project';
}

/** The project's package.json: a new one, or `existing` with what the project needs added. */
export function projectPackageJson(folder: string, version: string, existing?: string): string {
  let base: Record<string, unknown> = { name: packageNameOf(folder), version: '0.1.0', private: true };
  if (existing !== undefined) {
    try {
      base = JSON.parse(existing) as Record<string, unknown>;
    } catch (err) {
      throw new UsageError(
        `package.json of the folder is not JSON (${(err as Error).message}); fix or remove it`,
      );
    }
    if (typeof base !== 'object' || base === null || Array.isArray(base))
      throw new UsageError('package.json of the folder is not a JSON object; fix or remove it');
  }
  const record = (key: string): Record<string, unknown> => {
    const value = base[key];
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  };
  const merged = {
    ...base,
    type: base.type ?? 'module',
    scripts: { start: 'blockx up', validate: 'blockx validate tasks/*.json', ...record('scripts') },
    dependencies: { blockx: `^${version}`, ...record('dependencies') },
    // The Node types let an editor check code that uses node: modules (the example plugin writes files).
    devDependencies: { '@types/node': '^20.19.0', ...record('devDependencies') },
  };
  return `${JSON.stringify(merged, null, 2)}\n`;
}

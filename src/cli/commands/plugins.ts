// `blockx plugins`: the registered builders and writers with their package, version, schema path and what a
// writer accepts beyond its schema (`fence`: a follow job may use it; docs/plugins.md § Writers that follow).
import path from 'node:path';
import type { Command } from 'commander';
import type { RegisteredPlugin } from '../../kernel/plugin-registry.js';
import { CONFIG_FLAG, EXIT, type CliIo } from '../io.js';
import { renderTable } from '../table.js';

export function registerPluginsCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('plugins')
    .description('list the registered builders and writers')
    .option(...CONFIG_FLAG)
    .option('--json', 'print as JSON')
    .action(async (opts: { config?: string; json?: boolean }) => {
      const { bootKernel } = await import('../../kernel/kernel.js');
      const { plugins } = await bootKernel({ configPath: opts.config, cwd: io.cwd(), env: io.env });
      const all: RegisteredPlugin[] = [...plugins.builders.list(), ...plugins.writers.list()];
      const rel = (p: string | undefined) => (p ? path.relative(io.cwd(), p) || '.' : '-');
      const rows = all.map((p) => ({
        kind: p.kind,
        type: p.type,
        package: p.name,
        version: p.version ?? '-',
        path: rel(p.packagePath),
        schema: rel(p.schemaPath),
        accepts: p.kind === 'writer' && p.accepts.length > 0 ? p.accepts.join(',') : '-',
      }));
      if (opts.json) io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
      else io.stdout(renderTable(['kind', 'type', 'package', 'version', 'path', 'schema', 'accepts'], rows));
      setExit(EXIT.OK);
    });
}

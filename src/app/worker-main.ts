// Entry script: runs `workerCommand` in this process, for process tests and development
// (`blockx worker --deployment block` does the same through the CLI):
//
//   node --import tsx src/app/worker-main.ts --deployment block [--config FILE]
//
// Exit codes as the CLI's: 0 after a drain, 1 on a failure (or a forced stop), 2 on bad flags or config.
import { parseArgs } from 'node:util';
import { BlockxError } from '../kernel/errors.js';
import { workerCommand } from './worker-command.js';

async function main(): Promise<number> {
  let values: { deployment?: string; config?: string };
  try {
    ({ values } = parseArgs({
      options: { deployment: { type: 'string' }, config: { type: 'string', short: 'c' } },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`worker: ${(err as Error).message}\n`);
    return 2;
  }
  if (values.deployment === undefined || values.deployment === '') {
    process.stderr.write('worker: --deployment <name> is required\n');
    return 2;
  }
  try {
    return await workerCommand(
      { deployment: values.deployment, ...(values.config ? { config: values.config } : {}) },
      {
        stdout: (s) => void process.stdout.write(s),
        stderr: (s) => void process.stderr.write(s),
        env: process.env,
        cwd: () => process.cwd(),
      },
    );
  } catch (err) {
    process.stderr.write(`worker: ${err instanceof Error ? err.message : String(err)}\n`);
    const config =
      err instanceof BlockxError && (err.code === 'CONFIG_INVALID' || err.code === 'CONFIG_NOT_FOUND');
    return config ? 2 : 1;
  }
}

process.exitCode = await main();
// Nothing should be left running after a drain; do not let a stray handle keep the process alive.
setTimeout(() => process.exit(), 2_000).unref();

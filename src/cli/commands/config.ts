// `blockx config`: the effective configuration (file + defaults + env + flags) as YAML, with secrets
// masked (kernel/redact.ts): a URL's password and any field named like a password, token or secret.
import type { Command } from 'commander';
import { CONFIG_FLAG, EXIT, type CliIo } from '../io.js';

export function registerConfigCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('config')
    .description('print the effective config (after defaults and env overrides) as YAML')
    .option(...CONFIG_FLAG)
    .option('-d, --deployment <name>', 'show one deployment, with its env overrides applied')
    .action(async (opts: { config?: string; deployment?: string }) => {
      const { loadConfig } = await import('../../kernel/config.js');
      const { stringify } = await import('yaml');
      const { redactSecrets } = await import('../../kernel/redact.js');
      const config = loadConfig({
        configPath: opts.config,
        cwd: io.cwd(),
        env: io.env,
        ...(opts.deployment ? { deployments: [opts.deployment] } : {}),
      });
      const shown = opts.deployment
        ? { ...config, deployments: { [opts.deployment]: config.deployments[opts.deployment] } }
        : config;
      io.stdout(
        `# effective config of ${config.configFile}\n${stringify(redactSecrets(shown), { lineWidth: 0 })}`,
      );
      setExit(EXIT.OK);
    });
}

// Commands whose runtime is not built yet. They are declared with their contract flags (DESIGN.md §4.2)
// so `blockx --help` is complete, and each says plainly that it does not run anything yet (exit 1).
import type { Command } from 'commander';
import { CONFIG_FLAG, EXIT, type CliIo } from '../io.js';

const NOT_BUILT: {
  name: string;
  args?: string;
  description: string;
  flags: [string, string][];
  issue: string;
}[] = [
  {
    name: 'submit',
    args: '[tasks...]',
    description: 'submit task JSON files',
    flags: [
      ['--coordinator <addr>', 'reserve through this coordinator'],
      ['--worker <addr>', 'submit directly to this worker'],
      ['--wait', 'wait for terminal results'],
    ],
    issue: 'One-command cluster, client and submit UX',
  },
  {
    name: 'status',
    description: "the coordinator's view of its workers",
    flags: [],
    issue: 'One-command cluster, client and submit UX',
  },
  {
    name: 'data',
    args: '[args...]',
    description: 'generate or load block data',
    flags: [],
    issue: 'IO subsystem, storage and block data',
  },
];

export function registerPendingCommands(program: Command, io: CliIo, setExit: (code: number) => void): void {
  for (const cmd of NOT_BUILT) {
    const c = program
      .command(cmd.name)
      .description(`${cmd.description} (not built yet)`)
      .option(...CONFIG_FLAG);
    if (cmd.args) c.argument(cmd.args);
    for (const [flag, help] of cmd.flags) c.option(flag, help);
    c.action(() => {
      io.stderr(`blockx ${cmd.name}: not built yet; it arrives with the issue "${cmd.issue}".\n`);
      setExit(EXIT.FAILED);
    });
  }
}

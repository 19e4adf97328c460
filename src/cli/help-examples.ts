// Examples at the end of every command's `--help`, kept in one table so each command file stays a flag
// parser and `blockx --help` shows the same style everywhere. A command that adds its own examples (an
// 'afterHelp' listener of its own) keeps them; a command without a row here gets none, and
// test/unit/cli/help.test.ts fails until it has one.
import type { EventEmitter } from 'node:events';
import type { Command } from 'commander';

/** Command path (space-separated, without `blockx`) → example lines, each `command  # what it does`. */
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  '': [
    'blockx up                                   # a one-machine cluster, the demo backfill, then serve',
    'blockx validate examples/tasks/*.json        # check the config, plugins and task files',
    'blockx submit examples/tasks/hello-world.json # run a task and print its result',
    'blockx <command> --help                     # flags and examples of one command',
  ],
  init: [
    'blockx init my-app                          # a project in ./my-app: config, functions, a plugin, tasks',
    'blockx init . --force                       # into the current folder (package.json is merged)',
  ],
  up: [
    'blockx up                                   # serve on up.coordinatorListen until Ctrl-C',
    'blockx up --once                            # run the demo backfill, print its result, exit 0/1',
    'blockx up --listen 127.0.0.1:50051 --workers 1 --no-demo',
  ],
  coordinator: [
    'blockx coordinator --deployment block',
    'COORDINATOR_LISTEN=127.0.0.1:50051 ETCD_ENDPOINTS=http://127.0.0.1:2379 blockx coordinator --deployment bundle',
  ],
  worker: [
    'blockx worker --deployment block',
    'WORKER_LISTEN=127.0.0.1:9091 WORKER_TASK_SLOTS=16 blockx worker --deployment block',
  ],
  executor: [
    'blockx executor --socket /tmp/blockx-exec.sock --functions-dir functions   # normally its Worker does this',
  ],
  submit: [
    'blockx submit examples/tasks/hello-world.json',
    'blockx submit tasks.jsonl --concurrency 64 --json          # one JSON result per line',
    'COORDINATOR_LISTEN=127.0.0.1:50051 blockx submit task.json  # the coordinator from the env',
    'cat task.json | blockx submit - --worker 127.0.0.1:9090    # straight to one worker',
  ],
  backfill: [
    'blockx backfill examples/tasks/block-table-transfers.json --from 1 --to 10000',
    'blockx backfill examples/tasks/bundle-transfers.json --from 1 --to 10000 --per bundle --json',
  ],
  status: ['blockx status', 'blockx status --coordinator 127.0.0.1:50051 --json'],
  functions: [
    'blockx functions deploy                     # publish functions.dir to etcd; workers on functions.source: cluster switch',
    'blockx functions list                       # kept versions, and which worker runs which',
    'blockx functions use 3f9a                   # roll back (or forward) to a kept version by a unique prefix',
  ],
  'functions deploy': [
    "blockx functions deploy                     # the config's functions.dir",
    'blockx functions deploy ./functions --etcd http://10.0.0.5:2379 --json',
    'COORDINATOR_LISTEN=127.0.0.1:50051 blockx functions deploy   # blockx up without etcd: via its coordinator',
  ],
  'functions list': [
    'blockx functions list',
    'ETCD_ENDPOINTS=http://127.0.0.1:2379 blockx functions list --json',
  ],
  'functions use': ['blockx functions use 3f9a0c2d', 'blockx functions use 3f9a0c2d5e1b7a44 --json'],
  validate: [
    'blockx validate                             # the config and every plugin',
    'blockx validate examples/tasks/*.json --json # task files too, as JSON',
  ],
  plugins: ['blockx plugins', 'blockx plugins --json'],
  config: ['blockx config', 'blockx config --deployment bundle    # one deployment, env overrides applied'],
  data: ['blockx data generate --chain 1 --blocks 1000', 'blockx data load --table blocks blocks.jsonl'],
  'data generate': [
    'blockx data generate --chain 1 --blocks 1000',
    'blockx data generate --chain 1 --from 1001 --blocks 1000 --seed 7',
  ],
  'data load': [
    'blockx data load --table transactions txs.jsonl',
    'zcat blocks.jsonl.gz | blockx data load --table blocks - --skip-invalid',
  ],
  db: ['blockx db migrate', 'blockx db migrate --check'],
  'db migrate': [
    'blockx db migrate                  # create the missing tables',
    'blockx db migrate --check          # compare only',
  ],
  certs: [
    'blockx certs                                # CA + node certificate under .blockx/certs',
    'blockx certs --name worker-2 --host 10.0.0.12',
    'blockx certs --name alice --client          # a submitter certificate',
  ],
};

/** The path of a command under the root program, e.g. `data generate` ('' for the root). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** 'afterHelp' listeners a command has (commander's Command is an EventEmitter; its types omit it). */
function ownExamples(cmd: Command): number {
  return (cmd as unknown as EventEmitter).listenerCount('afterHelp');
}

/** The exit codes, at the end of `blockx --help` (src/cli/io.ts EXIT; docs/architecture.md § CLI). */
const EXIT_CODES = `
Exit codes:
  0  success
  1  a task failed, or validation found a problem
  2  usage (bad flags), a config that cannot be loaded, an address already in use, or a coordinator or
     worker that cannot be reached (the run never started)
`;

/** Adds the examples of HELP_EXAMPLES to `program` and every subcommand that has none of its own. */
export function addHelpExamples(program: Command): void {
  const visit = (cmd: Command): void => {
    const lines = HELP_EXAMPLES[commandPath(cmd)];
    if (lines !== undefined && ownExamples(cmd) === 0) {
      cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    }
    for (const sub of cmd.commands) visit(sub);
  };
  visit(program);
  program.addHelpText('after', EXIT_CODES);
}

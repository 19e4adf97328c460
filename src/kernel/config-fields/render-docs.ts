// docs/configuration.md from the field table: every field with its default, variable and meaning, the
// variables in one list, and how to add a field. Pure; scripts/gen-config.mjs writes it.
import { defaultText, type ConfigField, type ConfigSection } from './field.js';
import { fieldTree, type GroupNode } from './field-tree.js';
import { CONFIG_FIELDS, CONFIG_SECTIONS, groupOf } from './index.js';
import { PROFILING_VARIABLES } from '../observability/profiling.js';

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string): string => `\`${text}\``;

const SECTION_PREFIX: Readonly<Record<ConfigSection, string>> = {
  top: '',
  coordinator: 'deployments.<name>.coordinator.',
  worker: 'deployments.<name>.worker.',
  executor: 'deployments.<name>.executor.',
  source: 'sources.<name>.',
  job: 'jobs.<name>.',
  functionRetry: 'functions.retry.<name>.',
};

/** The "on reload" cell: what a running process does with a change (§ Changing the config of a running process). */
const reloadCell = (f: ConfigField): string => (f.reload === 'live' ? 'taken' : 'restart');

function fieldRows(fields: readonly ConfigField[]): string[] {
  return [
    '| field | default | env | on reload | meaning |',
    '| --- | --- | --- | --- | --- |',
    ...fields.map(
      (f) =>
        `| ${code(f.path)} | ${cell(defaultText(f) ?? 'unset')} | ${f.env ? code(f.env) : ''} | ${reloadCell(f)} | ${cell(f.description)} |`,
    ),
  ];
}

function leaves(group: GroupNode): ConfigField[] {
  return [...group.children.values()].flatMap((c) => (c.node === 'leaf' ? [c.field] : leaves(c)));
}

function sectionDocs(section: ConfigSection, fields: readonly ConfigField[]): string[] {
  const out: string[] = [];
  const tree = fieldTree(section, fields);
  if (section === 'top') {
    for (const [key, child] of tree.children) {
      if (child.node !== 'group') continue;
      out.push(
        `### \`${key}\``,
        '',
        groupOf('top', key)?.description ?? '',
        '',
        ...fieldRows(leaves(child)),
        '',
      );
    }
  } else {
    out.push(
      `### \`${SECTION_PREFIX[section].slice(0, -1)}\``,
      '',
      groupOf(section, '')?.description ?? '',
      '',
    );
    for (const [key, child] of tree.children) {
      if (child.node === 'group' && groupOf(section, key))
        out.push(`\`${key}\`: ${groupOf(section, key)?.description ?? ''}`, '');
    }
    out.push(...fieldRows(leaves(tree)), '');
  }
  return out;
}

const INTRO = `# Configuration

<!-- Generated from src/kernel/config-fields/ by scripts/gen-config.mjs; edit the table, not this file. -->

BlockX reads \`blockx.config.yaml\` (or \`--config FILE\`, \`BLOCKX_CONFIG\`, \`.blockxrc.yaml\`, \`package.json#blockx\`):
parse the YAML keeping line numbers → validate against \`schemas/blockx.config.schema.json\` → fill in
defaults → apply environment variables → apply command-line flags → check cross-field rules → freeze.
\`blockx config\` prints the result. This page lists every field of the service config with its default,
the environment variable that overrides it, whether a running process takes a change of it (§ Changing
the config of a running process) and what it means. Paths are relative to the section;
\`tables\` and the plugin configs of tasks have their own schemas (README § Configuration, the plugin
folders' READMEs).

Coordinator and worker variables apply to the deployment the process runs (\`--deployment\`; for
\`blockx config\` without it, to every deployment). Values are typed: \`COORDINATOR_MAX_CANDIDATES=abc\` is
an error naming the variable; an empty variable counts as unset.

## Fields
`;

const RELOAD = `## Changing the config of a running process

\`blockx up\` and \`blockx worker\` read their config file again when it changes (its modification time is
looked at every **500 ms**) and on \`SIGHUP\` (\`systemctl reload\`, \`kill -HUP\`), and take what a running
process can take (\`src/app/config-reload.ts\`); \`blockx coordinator\` does not. Each change is said in
one line (\`blockx up\`: applied ones on stdout, the others on stderr; \`blockx worker\`: its log), and a
change a running process cannot take leaves the running config serving:

| change | what a running process does |
| --- | --- |
| a table added to \`tables\` | created as \`blockx db migrate\` creates it, then served: tasks may write it at once |
| \`writable\` or \`description\` of a table | taken |
| a table's shape (a column added, dropped or retyped; another key column) | refused with the migration it needs; the table keeps serving as declared before |
| a table no longer declared | still served until a restart; nothing is dropped |
| a function file added or changed (\`functions.dir\`) | nothing to do: each task pins the folder's content when it starts (docs/functions.md) |
| a field of the tables above | as its "on reload" cell says: \`taken\`, or \`restart\` (the change is named in a line and waits for a restart) |
| \`deployments\`, \`sources\`, \`jobs\` | restart |
| a file that no longer loads | its problems are said; nothing changes |

Environment variables and command-line flags are those the process started with: only the file is read
again. docs/storage.md § Changing the config of a running cluster says more about tables.`;

const PROFILING_INTRO = `Not config fields: the profiling variables (docs/performance.md § Profiling). Each names a file the
process records into for its whole life, written when it stops cleanly; \`%p\` in the name is replaced by
the process id, and an Executor's file always gets its pid. Under \`blockx up\` the \`COORDINATOR_\` ones
profile its own process and the \`WORKER_\` ones each Worker child (its file gets its pid too); with the
Workers in the \`blockx up\` process (\`up.workerProcesses: false\`) only the \`COORDINATOR_\` ones apply.`;

const ADDING = `## Adding a field

A setting is written down once, as one row of the field table in \`src/kernel/config-fields/\`
(\`coordinator-fields.ts\`, \`worker-fields.ts\`, \`executor-fields.ts\` or \`shared-fields.ts\` for the top
level):

\`\`\`ts
// An example row (worker-fields.ts); not a real field.
w({
  path: 'idleTimeoutMs', // inside the section; dots nest (\`admission.builderSlots\`)
  type: { t: 'int', min: 0 }, // int (min, max), fraction, boolean, enum, listenAddr, registryPrefix, identifier, string, list
  default: 60_000, // omit for "unset"; { byKind: { block, bundle } } when it depends on the deployment kind
  env: 'WORKER_IDLE_TIMEOUT_MS', // optional; parsed by the type (envParser overrides)
  description: 'How long an idle connection stays open; 0 = forever.',
}),
\`\`\`

Then run \`node scripts/gen-config.mjs\`. From the row come: the default in the resolved config
(\`kernel/config-defaults.ts\`), the env binding (\`kernel/config-env.ts\`), the schema property with its
\`default\` and "Default N. Env VAR." text, the schema's validator as code (what a process loads
instead of compiling the schema), the field of the TS config type
(\`src/kernel/config-fields/generated/\`) and the lines of this page.
\`node scripts/check-generated.mjs\` (part of \`npm test\`) fails while a generated file is stale. A core
that reads the field takes it from the resolved config its app passes, and its \`DEFAULT_*\` constant
from the same table, so no other file names the number. A rule that links two fields (\`a <= b\`) goes
into \`kernel/config-rules.ts\`; a new object gets a group description in the same file as its rows.
`;

/** The whole of docs/configuration.md (before prettier). */
export function renderConfigDocs(fields: readonly ConfigField[] = CONFIG_FIELDS): string {
  const out = [INTRO];
  for (const section of CONFIG_SECTIONS) out.push(...sectionDocs(section, fields));
  out.push(RELOAD, '', '## Environment variables', '', '| variable | config field |', '| --- | --- |');
  out.push('| `BLOCKX_CONFIG` | the config file |');
  // Per source (docs/ingest.md § Where the URL lives): the name upper-cased; read by config.ts, not a row.
  out.push(
    '| `BLOCKX_SOURCE_<NAME>_RPC_URL` | `sources.<name>.rpcUrl` (declares the source when the file does not) |',
    '| `BLOCKX_SOURCE_<NAME>_FALLBACK_URL` | `sources.<name>.fallbackUrl` |',
    '| `BLOCKX_SOURCE_<NAME>_WS_URL` | `sources.<name>.wsUrl` |',
  );
  for (const f of fields.filter((row) => row.env !== undefined))
    out.push(`| ${code(f.env as string)} | ${code(SECTION_PREFIX[f.section] + f.path)} |`);
  out.push('', PROFILING_INTRO, '', '| variable | records |', '| --- | --- |');
  for (const [role, v] of Object.entries(PROFILING_VARIABLES))
    out.push(
      `| ${code(v.cpuProfile)} | a CPU profile of the ${role} (\`.cpuprofile\`) |`,
      `| ${code(v.trace)} | trace events of the ${role} (Chrome trace-event JSON) |`,
    );
  out.push('', ADDING);
  return out.join('\n');
}

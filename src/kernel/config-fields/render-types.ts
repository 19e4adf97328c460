// The TS interfaces of the config sections from the field table (generated/*-sections.ts): one
// readonly property per row, its JSDoc the row's description with default and variable, optional when
// the row has no default. kernel/config-types.ts assembles them into BlockxConfig. Pure.
import { fieldDescription, type ConfigField, type ConfigSection, type FieldType } from './field.js';
import { fieldTree, type GroupNode } from './field-tree.js';
import { CONFIG_FIELDS, CONFIG_GROUPS, groupOf } from './index.js';

/** The top-level sections, and the deployment sections: two files, each well under the size of a god file. */
export const CONFIG_TYPES_FILES = {
  top: 'src/kernel/config-fields/generated/top-level-sections.ts',
  deployment: 'src/kernel/config-fields/generated/deployment-sections.ts',
} as const;

function tsType(type: FieldType): string {
  switch (type.t) {
    case 'int':
    case 'fraction':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'enum':
      return type.values.map((v) => `'${v}'`).join(' | ');
    case 'list':
      return type.values === undefined
        ? 'readonly string[]'
        : `readonly (${type.values.map((v) => `'${v}'`).join(' | ')})[]`;
    case 'listenAddr':
    case 'registryPrefix':
    case 'identifier':
    case 'string':
      return 'string';
    default: {
      const never: never = type;
      throw new Error(`unknown field type ${JSON.stringify(never)}`);
    }
  }
}

/** A JSDoc block, words wrapped at about 100 columns. */
function jsDoc(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && indent.length + 3 + line.length + 1 + word.length > 104) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((l) => `${indent} * ${l}`), `${indent} */`];
}

class TypeWriter {
  private readonly named = new Map<string, string>();
  readonly out: string[] = [];

  constructor(private readonly fields: readonly ConfigField[]) {}

  /** The body `{ ... }` of a group, registering named sub-groups on the way. */
  private body(section: ConfigSection, group: GroupNode, indent: string, shared = false): string[] {
    const lines: string[] = [];
    for (const [key, child] of group.children) {
      if (child.node === 'leaf') {
        const f = child.field;
        // A type several groups share (IoRetryConfig) cannot name one group's defaults.
        lines.push(...jsDoc(shared ? f.description : fieldDescription(f), indent));
        lines.push(`${indent}readonly ${key}${f.default === undefined ? '?' : ''}: ${tsType(f.type)};`);
      } else {
        const g = groupOf(section, child.path);
        if (g?.description) lines.push(...jsDoc(g.description, indent));
        if (g?.typeName) {
          this.declare(section, child, g.typeName);
          lines.push(`${indent}readonly ${key}: ${g.typeName};`);
        } else {
          lines.push(
            `${indent}readonly ${key}: {`,
            ...this.body(section, child, `${indent}  `, shared),
            `${indent}};`,
          );
        }
      }
    }
    return lines;
  }

  declare(section: ConfigSection, group: GroupNode, name: string): void {
    const shared = CONFIG_GROUPS.filter((g) => g.typeName === name).length > 1;
    const text = this.body(section, group, '  ', shared).join('\n');
    const seen = this.named.get(name);
    if (seen !== undefined) {
      if (seen !== text) throw new Error(`config groups named ${name} have different fields`);
      return;
    }
    this.named.set(name, text);
    const description = shared ? undefined : groupOf(section, group.path)?.description;
    this.out.push(
      ...(description ? jsDoc(description, '') : []),
      `export interface ${name} {`,
      text,
      '}',
      '',
    );
  }

  renderTop(): string {
    const top = fieldTree('top', this.fields);
    for (const [key, child] of top.children) {
      const name = child.node === 'group' ? groupOf('top', key)?.typeName : undefined;
      if (child.node !== 'group' || name === undefined)
        throw new Error(`top-level config group ${key} needs a typeName`);
      this.declare('top', child, name);
    }
    return this.out.join('\n');
  }

  renderDeployment(): string {
    for (const section of ['coordinator', 'worker', 'executor', 'source', 'job', 'functionRetry'] as const) {
      const name = groupOf(section, '')?.typeName;
      if (name === undefined) throw new Error(`config section ${section} needs a typeName`);
      this.declare(section, fieldTree(section, this.fields), name);
    }
    return this.out.join('\n');
  }
}

const header = (what: string): string =>
  [
    '// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-config.mjs from the config field table',
    '// (src/kernel/config-fields/); `node scripts/check-generated.mjs` checks it is fresh. The resolved',
    `// ${what} (defaults filled in); kernel/config-types.ts assembles them into BlockxConfig.`,
    '',
    '',
  ].join('\n');

/** The interfaces of the top-level sections (tls, registry, storage, ...). */
export function renderTopLevelTypes(fields: readonly ConfigField[] = CONFIG_FIELDS): string {
  return header('top-level sections') + new TypeWriter(fields).renderTop();
}

/** The interfaces of a deployment's coordinator, worker and executor sections, and of a source. */
export function renderDeploymentTypes(fields: readonly ConfigField[] = CONFIG_FIELDS): string {
  return header('deployment sections') + new TypeWriter(fields).renderDeployment();
}

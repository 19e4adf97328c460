// The config field table is the one place a setting is written down (docs/configuration.md § Adding a
// field): the generated files must be fresh, and every derived view must agree with the rows.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  compareConfigArtefacts,
  renderConfigArtefacts,
  type ConfigArtefact,
} from '../../../scripts/gen-config.mjs';
import {
  CONFIG_FIELDS,
  configField,
  defaultFor,
  fieldDescription,
  fieldsOf,
  sectionDefaults,
} from '../../../src/kernel/config-fields/index.js';
import { ENV_BINDINGS, readEnvOverrides } from '../../../src/kernel/config-env.js';
import type { ConfigField } from '../../../src/kernel/config-fields/index.js';
import { resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';

const REPO = path.resolve(import.meta.dirname, '../../..');
const load = () => import('../../../src/kernel/config-fields/render.js');

describe('files generated from the config field table (scripts/check-generated.mjs)', () => {
  // Rendering runs prettier over every file: once, with a generous bound, for both checks.
  let rendered: ConfigArtefact[] = [];
  beforeAll(async () => {
    rendered = await renderConfigArtefacts(load);
  }, 60_000);

  it('the committed schema, its validator, section types, docs/configuration.md and the schema validators are fresh', () => {
    expect(rendered.map((a) => a.file).sort()).toEqual([
      'docs/configuration.md',
      'schemas/blockx.config.schema.json',
      'src/kernel/config-fields/generated/config-validator.ts',
      'src/kernel/config-fields/generated/deployment-sections.ts',
      'src/kernel/config-fields/generated/top-level-sections.ts',
      'src/kernel/generated/builtin-plugin-validators.ts',
      'src/kernel/generated/kernel-schema-validators.ts',
    ]);
    expect(compareConfigArtefacts(REPO, rendered)).toEqual([]);
  });

  it('a stale or missing file is reported by name', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'blockx-gen-config-'));
    try {
      for (const { file } of rendered) {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        cpSync(path.join(REPO, file), path.join(root, file));
      }
      const schemaFile = path.join(root, 'schemas/blockx.config.schema.json');
      writeFileSync(schemaFile, readFileSync(schemaFile, 'utf8').replace('Default 10000.', 'Default 9000.'));
      rmSync(path.join(root, 'docs/configuration.md'));
      expect(compareConfigArtefacts(root, rendered)).toEqual([
        'differs: schemas/blockx.config.schema.json',
        'missing: docs/configuration.md',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the config field table', () => {
  it('names each field and each variable once', () => {
    const keys = CONFIG_FIELDS.map((f) => `${f.section}:${f.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const vars = CONFIG_FIELDS.flatMap((f) => (f.env ? [f.env] : []));
    expect(new Set(vars).size).toBe(vars.length);
    expect(ENV_BINDINGS.map((b) => b.variable)).toEqual(vars);
  });

  it('the resolved config of a minimal file is exactly the table defaults', () => {
    const text = 'version: 1\ndeployments:\n  block: { kind: block }\n  bundle: { kind: bundle }\n';
    const config = resolveConfig(parseConfigText(text, '/cfg/blockx.config.yaml'), { env: {} });
    for (const kind of ['block', 'bundle'] as const) {
      const dep = config.deployments[kind]!;
      expect(dep.coordinator).toEqual(sectionDefaults('coordinator', kind));
      expect(dep.worker).toEqual(sectionDefaults('worker', kind));
      expect(dep.executor).toEqual(sectionDefaults('executor', kind));
    }
    const top = sectionDefaults('top') as { storage: unknown; registry: unknown; up: unknown };
    expect(config.storage).toEqual(top.storage);
    expect(config.registry).toEqual(top.registry);
    expect(config.up).toEqual(top.up);
  });

  it('every schema property carries its row: the default, and "Default N. Env VAR." in its text', () => {
    const schema = JSON.parse(readFileSync(path.join(REPO, 'schemas/blockx.config.schema.json'), 'utf8')) as {
      $defs: Record<string, { properties: Record<string, unknown> }>;
    };
    for (const field of CONFIG_FIELDS) {
      const [first, ...rest] = field.path.split('.');
      let node = (field.section === 'top' ? schema.$defs[first!] : schema.$defs[field.section]) as {
        properties: Record<string, unknown>;
      };
      const segments = field.section === 'top' ? rest : [first!, ...rest];
      for (const seg of segments.slice(0, -1)) node = node.properties[seg] as typeof node;
      const prop = node.properties[segments.at(-1)!] as { default?: unknown; description: string };
      expect(prop.description, field.path).toBe(fieldDescription(field));
      if (field.default !== undefined && !('byKind' in Object(field.default)))
        expect(prop.default, field.path).toEqual(defaultFor(field, 'block'));
      if (field.env) expect(prop.description).toContain(`Env ${field.env}.`);
    }
    expect(configField('coordinator', 'heartbeatTimeoutMs')).toMatchObject({
      default: 10_000,
      env: 'COORDINATOR_HEARTBEAT_TIMEOUT_MS',
    });
  });

  it('the README names every variable of the table', () => {
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    for (const field of CONFIG_FIELDS.filter((f) => f.env))
      expect(readme, field.env).toContain(`\`${field.env}\``);
  });

  // Numbers with a unit (`8 h`, `64 MiB`) are left to the reader.
  it('every number the README § Sections gives a field, `name` (N) or `a` / `b` (N / M), is its table default', () => {
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const prose = readme.slice(readme.indexOf('### Sections'), readme.indexOf('### Environment variables'));
    const byName = new Map<string, unknown[]>();
    for (const f of CONFIG_FIELDS) {
      const name = f.path.split('.').at(-1)!;
      byName.set(name, [...(byName.get(name) ?? []), defaultFor(f, 'block')]);
    }
    let checked = 0;
    for (const m of prose.matchAll(
      /((?:`\w+`(?: \/ )?)+) \((\d[\d.]*(?: \/ \d[\d.]*)*)(?![\d.]| ?(?:h|s|KiB|MiB|GiB)\b)/g,
    )) {
      const names = [...m[1]!.matchAll(/`(\w+)`/g)].map((n) => n[1]!);
      const numbers = m[2]!.split(' / ').map(Number);
      if (names.length !== numbers.length) continue;
      names.forEach((name, i) => {
        const defaults = byName.get(name);
        if (defaults === undefined) return;
        expect(defaults, `README: \`${name}\` (${numbers[i]})`).toContain(numbers[i]);
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('executor fields have no variables (a variable applies to a coordinator or worker section)', () => {
    expect(fieldsOf('executor').filter((f) => f.env)).toEqual([]);
  });
});

/** Text a variable of this row accepts, and the value it must become. */
function validEnvValue(field: ConfigField): fc.Arbitrary<[string, unknown]> {
  const same = (a: fc.Arbitrary<string>) => a.map((v): [string, unknown] => [v, v]);
  switch (field.envParser) {
    case 'storageUrl':
      return same(fc.constantFrom('sqlite:x.db', 'sqlite::memory:', 'postgres://u@h:5432/db'));
    case 'urlPath':
      return same(fc.stringMatching(/^\/[a-z]{0,8}$/));
    case 'path':
      return same(fc.stringMatching(/^[a-z][a-z/]{0,8}$/));
    case 'listenAddr':
      return fc
        .integer({ min: 0, max: 65535 })
        .map((p): [string, unknown] => [`127.0.0.1:${p}`, `127.0.0.1:${p}`]);
    case 'text':
      return same(fc.stringMatching(/^[a-z/]{1,8}$/));
    case undefined:
      break;
  }
  const type = field.type;
  switch (type.t) {
    case 'int':
      return fc
        .integer({ min: type.min, max: type.max ?? 2 ** 31 })
        .map((n): [string, unknown] => [String(n), n]);
    case 'fraction':
      return fc.integer({ min: 1, max: 1000 }).map((n): [string, unknown] => [String(n / 1000), n / 1000]);
    case 'boolean':
      return fc.boolean().map((b): [string, unknown] => [String(b), b]);
    case 'enum':
      return same(fc.constantFrom(...type.values));
    case 'listenAddr':
      return fc.integer({ min: 0, max: 65535 }).map((p): [string, unknown] => [`:${p}`, `:${p}`]);
    case 'list':
      return fc
        .array(fc.stringMatching(/^[a-z/]{1,6}$/), { minLength: 1, maxLength: 4 })
        .map((items): [string, unknown] => [items.join(','), items]);
    default:
      return same(fc.stringMatching(/^[a-z/]{1,8}$/));
  }
}

describe('env bindings derived from the table', () => {
  const bound = CONFIG_FIELDS.filter((f) => f.env !== undefined);

  it.each(bound.map((f) => [f.env, f] as const))(
    '%s parses every value of its type to its field',
    (_, field) => {
      fc.assert(
        fc.property(validEnvValue(field), ([raw, value]) => {
          const { overrides, issues } = readEnvOverrides({ [field.env!]: raw });
          expect(issues).toEqual([]);
          expect(overrides).toHaveLength(1);
          expect(overrides[0]!.binding).toMatchObject({ scope: field.section, path: field.path.split('.') });
          expect(overrides[0]!.value).toEqual(value);
        }),
        { numRuns: 25 },
      );
    },
  );

  it('a number variable given text is an issue naming the variable and the field', () => {
    for (const field of bound.filter((f) => f.type.t === 'int' || f.type.t === 'fraction')) {
      const { overrides, issues } = readEnvOverrides({ [field.env!]: 'abc' });
      expect(overrides).toEqual([]);
      expect(issues).toEqual([
        expect.objectContaining({
          source: 'env',
          variable: field.env,
          path: (field.section === 'top' ? [field.path] : ['deployments.*', field.section, field.path]).join(
            '.',
          ),
        }),
      ]);
    }
  });
});

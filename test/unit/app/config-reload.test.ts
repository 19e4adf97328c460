// The config reload of a running process (src/app/config-reload.ts) against a fake storage and loader:
// an added table is served, a changed one refused with its migration while the rest still applies, a
// file that does not load changes nothing, other sections wait for a restart, reloads run one at a time.
import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import {
  LIVE_FIELDS,
  createConfigReload,
  watchConfigFile,
  type ConfigReloadOptions,
} from '../../../src/app/config-reload.js';
import type { SignalSource } from '../../../src/app/signals.js';
import { resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';
import type { BlockxConfig, TableConfig } from '../../../src/kernel/config-types.js';

const HEAD = `version: 1
deployments:
  block:
    kind: block
tables:
  a:
    columns: { id: { type: integer }, v: { type: text, nullable: true } }
    primaryKey: [id]
`;
const load = (text: string): BlockxConfig =>
  resolveConfig(parseConfigText(text, '/cfg/blockx.config.yaml'), { env: {} });

function harness(start: string, withStorage = true, plugins?: ConfigReloadOptions['plugins']) {
  let text = start;
  let tables: Readonly<Record<string, TableConfig>> = load(start).tables;
  const served: string[][] = [];
  const lines: string[] = [];
  let failNext: Error | undefined;
  const storage: ConfigReloadOptions['storage'] = {
    get tables() {
      return tables;
    },
    serveTables: (next) => {
      if (failNext) return Promise.reject(failNext);
      served.push(Object.keys(next));
      tables = next;
      return Promise.resolve({ created: [], unchanged: [] });
    },
  };
  const reload = createConfigReload({
    load: () => load(text),
    running: load(start),
    ...(withStorage ? { storage } : {}),
    ...(plugins ? { plugins } : {}),
    report: (level, line) => lines.push(`${level}: ${line}`),
  });
  return {
    reload,
    served,
    lines,
    tables: () => tables,
    write: (t: string) => (text = t),
    failWith: (e: Error) => (failNext = e),
  };
}

describe('config reload', () => {
  it('serves an added table and says so; the same file again changes nothing', async () => {
    const h = harness(HEAD);
    h.write(
      `${HEAD}  b:\n    columns: { id: { type: integer } }\n    primaryKey: [id]\n    writable: true\n`,
    );
    await h.reload();
    expect(h.served).toEqual([['a', 'b']]);
    expect(h.lines).toEqual([
      'info: config reload: table "b" created (as blockx db migrate does); tasks may use it now',
    ]);
    await h.reload();
    expect(h.served).toHaveLength(1);
    expect(h.lines).toHaveLength(1);
  });

  it('refuses a changed table with its migration, keeps its running declaration, still adds the new one', async () => {
    const h = harness(HEAD);
    const before = h.tables()['a'];
    h.write(
      HEAD.replace('v: { type: text, nullable: true }', 'v: { type: json, nullable: true }') +
        '  b:\n    columns: { id: { type: integer } }\n    primaryKey: [id]\n',
    );
    await h.reload();
    expect(h.tables()['a']).toBe(before);
    expect(Object.keys(h.tables())).toEqual(['a', 'b']);
    expect(h.lines[0]).toMatch(
      /^warn: config reload: table "a" changed \(column "v" was text, is json\): refused, .* The migration it needs: copy out the rows of "a" .* DROP TABLE "a"; blockx db migrate/,
    );
  });

  it('a file that does not load, or tables the database refuses, change nothing', async () => {
    const h = harness(HEAD);
    h.write(`${HEAD}  b: { columns: {} }\n`);
    await h.reload();
    expect(h.served).toEqual([]);
    expect(h.lines[0]).toMatch(
      /^error: config reload: the file does not load; the running config keeps serving: /,
    );
    h.write(`${HEAD}  b:\n    columns: { id: { type: integer } }\n    primaryKey: [id]\n`);
    h.failWith(new Error('SCHEMA_MISMATCH: table "b" has a column "x" in the database'));
    await h.reload();
    expect(Object.keys(h.tables())).toEqual(['a']);
    expect(h.lines[1]).toMatch(/^error: config reload: the new tables were not applied; .*SCHEMA_MISMATCH/);
  });

  it('another section is named as waiting for a restart', async () => {
    const h = harness(HEAD);
    h.write(HEAD.replace('kind: block', 'kind: block\n    worker: { taskSlots: 8 }'));
    await h.reload();
    expect(h.lines).toEqual(['warn: config reload: deployments changed; it takes effect after a restart']);
  });

  it('without a storage to serve them (a Worker whose IO is injected), a table change waits for a restart', async () => {
    const h = harness(HEAD, false);
    h.write(`${HEAD}  b:\n    columns: { id: { type: integer } }\n    primaryKey: [id]\n`);
    await h.reload();
    expect(h.served).toEqual([]);
    expect(h.lines).toEqual(['warn: config reload: tables changed; they take effect after a restart']);
  });
});

describe('config reload: plugins', () => {
  const WITH_PLUGINS = HEAD.replace('deployments:', 'plugins:\n  dirs: [more]\ndeployments:');
  it('the field table marks plugins.dirs and plugins.packages live, and only them', () => {
    expect(LIVE_FIELDS).toEqual(['plugins.dirs', 'plugins.packages']);
  });

  it('hands every reload to the plugin step; a plugins change is then no restart', async () => {
    const seen: string[][] = [];
    const h = harness(HEAD, true, (next) => {
      seen.push([...next.plugins.dirs]);
      return Promise.resolve();
    });
    await h.reload();
    h.write(WITH_PLUGINS);
    await h.reload();
    expect(seen).toEqual([[], ['/cfg/more']]);
    expect(h.lines).toEqual([]);
  });

  it('without a plugin step, a plugins change waits for a restart', async () => {
    const h = harness(HEAD);
    h.write(WITH_PLUGINS);
    await h.reload();
    expect(h.lines).toEqual(['warn: config reload: plugins changed; it takes effect after a restart']);
  });
});

describe('watchConfigFile', () => {
  it('without a file, reloads on SIGHUP only, and stops listening when told', () => {
    const signals = new EventEmitter();
    let reloads = 0;
    const stop = watchConfigFile(
      undefined,
      () => {
        reloads++;
        return Promise.resolve();
      },
      signals as unknown as SignalSource,
    );
    signals.emit('SIGHUP');
    signals.emit('SIGHUP');
    expect(reloads).toBe(2);
    stop();
    expect(signals.listenerCount('SIGHUP')).toBe(0);
  });
});

// Storage URLs → backends; anything else is BAD_URL; passwords never reach displayUrl.
import { describe, expect, it } from 'vitest';
import { StorageErrorCode } from '../../../../src/services/storage/errors.js';
import {
  maskStorageUrl,
  openStorage,
  storageIdentity,
} from '../../../../src/services/storage/open-storage.js';
import {
  CONFORMANCE_TABLES,
  conformanceSettings,
  storageErrorOf,
} from '../../../support/storage-conformance.js';

describe('openStorage', () => {
  it.each(['mysql://h/db', 'sqlite:', 'file:/tmp/x.db', '', 'postgres://[bad'])(
    'refuses %j with BAD_URL',
    async (url) => {
      const err = await storageErrorOf(
        openStorage(conformanceSettings(url), CONFORMANCE_TABLES),
        StorageErrorCode.BAD_URL,
      );
      expect(err.retryable).toBe(false);
    },
  );

  it('opens sqlite::memory: and a postgres URL (lazily: no server is contacted until first use)', async () => {
    const mem = await openStorage(conformanceSettings('sqlite::memory:'), CONFORMANCE_TABLES);
    expect([mem.kind, mem.displayUrl, mem.tables]).toEqual(['sqlite', 'sqlite::memory:', CONFORMANCE_TABLES]);
    expect(mem.admission).toEqual({ inUse: 0, waiting: 0, capacity: 8 });
    await mem.close();
    for (const scheme of ['postgres', 'postgresql']) {
      const pg = await openStorage(
        conformanceSettings(`${scheme}://u:pw@127.0.0.1:1/db`),
        CONFORMANCE_TABLES,
      );
      expect([pg.kind, pg.displayUrl]).toEqual(['postgres', `${scheme}://u:***@127.0.0.1:1/db`]);
      await pg.close();
    }
  });
});

describe('maskStorageUrl', () => {
  it.each([
    ['postgres://u:secret@h:5432/db?sslmode=require', 'postgres://u:***@h:5432/db?sslmode=require'],
    ['postgres://u@h/db', 'postgres://u@h/db'],
    ['sqlite:/tmp/x.db', 'sqlite:/tmp/x.db'],
    ['postgres://u:se%cret@h/db', 'postgres://u:***@h/db'],
  ])('%s → %s', (url, masked) => {
    expect(maskStorageUrl(url)).toBe(masked);
  });
});

describe('storageIdentity: one string per database a URL reaches, never a password', () => {
  it.each([
    ['sqlite:chain.db', '/srv/app', 'sqlite:/srv/app/chain.db'],
    ['sqlite:./data/../chain.db', '/srv/app', 'sqlite:/srv/app/chain.db'],
    ['sqlite:/abs/chain.db', '/srv/app', 'sqlite:/abs/chain.db'],
    ['sqlite::memory:', '/srv/app', 'sqlite::memory:'],
    ['postgres://u:secret@DB.example:5432/chain', '/x', 'postgres://u@db.example:5432/chain'],
    ['postgresql://u@db.example/chain', '/x', 'postgres://u@db.example:5432/chain'],
    [
      'postgres://u@db.example:6543/chain?sslmode=require&password=p',
      '/x',
      'postgres://u@db.example:6543/chain?sslmode=require',
    ],
  ])('%s (from %s) → %s', (url, baseDir, identity) => {
    expect(storageIdentity(url, baseDir)).toBe(identity);
  });

  it('tells apart databases on another host, port, name or file', () => {
    const ids = [
      'postgres://u@a:5432/chain',
      'postgres://u@b:5432/chain',
      'postgres://u@a:5433/chain',
      'postgres://u@a:5432/other',
      'sqlite:chain.db',
      'sqlite:other.db',
    ].map((u) => storageIdentity(u, '/srv'));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

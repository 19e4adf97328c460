import { describe, expect, it } from 'vitest';
import { isSecretName, redactSecrets, redactText } from '../../../src/kernel/redact.js';

describe('redactText', () => {
  it.each([
    ['postgres://user:pw@host/db', 'postgres://user:***@host/db'],
    ['postgresql://u:p%40ss@h:5432/db?sslmode=require', 'postgresql://u:***@h:5432/db?sslmode=require'],
    [
      'cannot connect to postgres://a:b@c/d: ECONNREFUSED',
      'cannot connect to postgres://a:***@c/d: ECONNREFUSED',
    ],
    ['postgres://h/db?user=u&password=pw&sslmode=x', 'postgres://h/db?user=u&password=***&sslmode=x'],
    ['https://h/x?token=abc', 'https://h/x?token=***'],
    // Nothing secret: unchanged.
    ['postgres://user@host/db', 'postgres://user@host/db'],
    ['http://127.0.0.1:2379', 'http://127.0.0.1:2379'],
    ['http://host:8080/a/b?page=2', 'http://host:8080/a/b?page=2'],
    ['sqlite:.blockx/blockx.db', 'sqlite:.blockx/blockx.db'],
    ['', ''],
  ])('%s → %s', (input, want) => {
    expect(redactText(input)).toBe(want);
  });
});

describe('isSecretName', () => {
  it.each([
    'password',
    'dbPassword',
    'PASSWD',
    'pwd',
    'secret',
    'clientSecret',
    'token',
    'apiKey',
    'api_key',
    'credentials',
    'privateKey',
  ])('%s is a secret', (n) => expect(isSecretName(n)).toBe(true));
  it.each(['primaryKey', 'keyPrefix', 'leaseTtlMs', 'passes', 'url', 'endpoints'])('%s is not', (n) =>
    expect(isSecretName(n)).toBe(false),
  );
});

describe('redactSecrets', () => {
  it('masks secret-named fields and URL passwords deep inside, without touching the input', () => {
    const input = {
      storage: { url: 'postgres://app:pw@db/x', poolSize: 4 },
      plugins: [{ options: { apiKey: 'k', token: 123, password: '', nested: ['postgres://u:p@h/d'] } }],
      primaryKey: ['id'],
    };
    const copy = structuredClone(input);
    expect(redactSecrets(input)).toEqual({
      storage: { url: 'postgres://app:***@db/x', poolSize: 4 },
      plugins: [{ options: { apiKey: '***', token: '***', password: '', nested: ['postgres://u:***@h/d'] } }],
      primaryKey: ['id'],
    });
    expect(input).toEqual(copy);
  });

  it('cuts cycles', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a['self'] = a;
    expect(redactSecrets(a)).toEqual({ name: 'a', self: '[circular]' });
  });
});

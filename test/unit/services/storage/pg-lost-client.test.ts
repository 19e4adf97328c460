// The session settings that bound how long PostgreSQL keeps the transaction of a silent client
// (src/services/storage/pg-lost-client.ts; docs/storage.md § A lost connection).
import { describe, expect, it } from 'vitest';
import { lostClientSettings } from '../../../../src/services/storage/pg-lost-client.js';

describe('lostClientSettings', () => {
  it.each([
    [
      10_000,
      'SET idle_in_transaction_session_timeout = 10000; SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 5; SET tcp_user_timeout = 10000',
    ],
    [
      60_000,
      'SET idle_in_transaction_session_timeout = 60000; SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 6; SET tcp_keepalives_count = 5; SET tcp_user_timeout = 60000',
    ],
    // Keepalive settings are whole seconds, never below 1.
    [
      300,
      'SET idle_in_transaction_session_timeout = 300; SET tcp_keepalives_idle = 1; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 5; SET tcp_user_timeout = 300',
    ],
  ])('%i ms', (ms, sql) => {
    expect(lostClientSettings(ms)).toBe(sql);
  });

  it('0 leaves the server its own settings', () => {
    expect(lostClientSettings(0)).toBeUndefined();
  });

  it('the statement that older servers lack comes last', () => {
    expect(lostClientSettings(10_000)?.split('; ').at(-1)).toMatch(/^SET tcp_user_timeout/);
  });

  it.each([-1, 1.5, Number.NaN])('%s is refused', (ms) => {
    expect(() => lostClientSettings(ms)).toThrow(RangeError);
  });
});

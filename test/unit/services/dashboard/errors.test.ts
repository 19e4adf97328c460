import { describe, expect, it } from 'vitest';
import { upDashboardListen } from '../../../../src/app/run-cluster.js';
import { DashboardErrorCode, DashboardServerError } from '../../../../src/services/dashboard/errors.js';

describe('dashboard error codes', () => {
  it('each key equals its code, so codes never drift', () => {
    for (const [key, code] of Object.entries(DashboardErrorCode)) expect(code).toBe(key);
  });

  it('DashboardServerError carries where it happened as a field', () => {
    const err = new DashboardServerError('DASHBOARD_LISTEN_FAILED', '127.0.0.1:8081', 'in use');
    expect(err).toMatchObject({
      code: 'DASHBOARD_LISTEN_FAILED',
      where: '127.0.0.1:8081',
      name: 'DashboardServerError',
    });
  });
});

describe("blockx up's dashboard address (upDashboardListen)", () => {
  it.each([
    ['127.0.0.1:8080', '127.0.0.1:8081'],
    ['0.0.0.0:9000', '127.0.0.1:9001'],
    ['[::1]:7000', '127.0.0.1:7001'],
    ['127.0.0.1:0', '127.0.0.1:0'],
    ['127.0.0.1:65535', '127.0.0.1:0'],
    [':8080', '127.0.0.1:8081'],
  ])('beside a coordinator on %s: %s (always loopback)', (coordinator, dashboard) =>
    expect(upDashboardListen(coordinator)).toBe(dashboard),
  );
});

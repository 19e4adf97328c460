// Stable error codes of the dashboard server (docs/dashboard.md). Each key equals its code;
// test/unit/services/dashboard/errors.test.ts pins that, so a code never drifts.
import { BlockxError } from '../../kernel/errors.js';

export const DashboardErrorCode = {
  /** `observability.dashboard.listenAddr` is not `host:port`, `:port`, `port` or `[v6]:port`. */
  DASHBOARD_ADDRESS_INVALID: 'DASHBOARD_ADDRESS_INVALID',
  /** The HTTP server could not listen (port in use, no such interface, no permission). */
  DASHBOARD_LISTEN_FAILED: 'DASHBOARD_LISTEN_FAILED',
  /** A file of the page (web/dashboard/) is missing or unreadable: the installation is incomplete. */
  DASHBOARD_ASSETS_MISSING: 'DASHBOARD_ASSETS_MISSING',
} as const;
export type DashboardErrorCode = (typeof DashboardErrorCode)[keyof typeof DashboardErrorCode];

export class DashboardServerError extends BlockxError {
  declare readonly code: DashboardErrorCode;
  /** The listen address as configured, or the asset folder for DASHBOARD_ASSETS_MISSING. */
  readonly where: string;
  /** Where the address came from (a config key, or the `--dashboard` flag), for the CLI's hint. */
  readonly configKey: string | undefined;
  constructor(
    code: DashboardErrorCode,
    where: string,
    message: string,
    options?: { cause?: unknown; configKey?: string },
  ) {
    super(code, message, options);
    this.where = where;
    this.configKey = options?.configKey;
  }
}

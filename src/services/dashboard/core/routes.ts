// What one HTTP request to the dashboard gets, decided from its method, target and Host header alone
// (docs/dashboard.md § Security). Pure: the server (../dashboard-server.ts) does the IO.
//
// Theory of operation:
// - Only GET and HEAD exist (405 with `Allow` otherwise, OPTIONS included: there is no CORS, so no
//   preflight is ever answered).
// - The path is looked up in a fixed table: `/` is the page, `/api/snapshot` and `/api/events` the data,
//   `/assets/<name>` one of the files the server loaded at start. Nothing is ever joined onto a folder,
//   so no spelling of `..` can reach another file; a path that tries (dot segments, encoded slashes or
//   dots, backslashes, NUL) is refused with 400 before the lookup, everything else unknown is 404.
// - A request target longer than MAX_TARGET_LENGTH is 414: the server never parses more than that.
// - Served without TLS, the page answers only to Host names that cannot be re-pointed by a stranger's
//   DNS (IP literals, `localhost`, `*.localhost`) or that the operator listed: the defence against DNS
//   rebinding, which would otherwise let any web page the operator visits read the dashboard. With TLS
//   the browser must present a client certificate, which a rebinding page cannot.

/** Longest request target (path and query) the server reads. */
export const MAX_TARGET_LENGTH = 2_048;

export type Route =
  | { readonly kind: 'page' }
  | { readonly kind: 'asset'; readonly name: string }
  | { readonly kind: 'snapshot' }
  | { readonly kind: 'events' }
  | { readonly kind: 'refused'; readonly status: 400 | 403 | 404 | 405 | 414; readonly message: string };

export interface RouteRequest {
  readonly method: string;
  /** The request target as received (`req.url`). */
  readonly target: string;
  /** The Host header, '' when absent. */
  readonly host: string;
}

export interface RouteTable {
  /** Names under /assets/ the server can answer (e.g. `app.js`). */
  readonly assets: ReadonlySet<string>;
  /** Check the Host header (plaintext listeners only). */
  readonly checkHost: boolean;
  /** Host names accepted besides IP literals and localhost (lower case, no port). */
  readonly allowedHosts: ReadonlySet<string>;
}

const SUSPICIOUS = /(^|\/)\.\.?(\/|$)|%2e|%2f|%5c|%00|\\|\0/i;

export function routeRequest(req: RouteRequest, table: RouteTable): Route {
  if (req.target.length > MAX_TARGET_LENGTH) {
    return refused(414, `request target longer than ${MAX_TARGET_LENGTH} characters`);
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return refused(405, `method ${req.method} not allowed: the dashboard is read-only (GET, HEAD)`);
  }
  if (table.checkHost && !hostAllowed(req.host, table.allowedHosts)) {
    return refused(
      403,
      `host ${JSON.stringify(req.host)} is not allowed: open the dashboard by IP address or localhost, or add the name to observability.dashboard.allowedHosts`,
    );
  }
  const path = req.target.split('?', 1)[0] as string;
  if (!path.startsWith('/') || SUSPICIOUS.test(path)) return refused(400, 'malformed path');
  if (path === '/' || path === '/index.html') return { kind: 'page' };
  if (path === '/api/snapshot') return { kind: 'snapshot' };
  if (path === '/api/events') return { kind: 'events' };
  if (path.startsWith('/assets/')) {
    const name = path.slice('/assets/'.length);
    if (table.assets.has(name)) return { kind: 'asset', name };
  }
  return refused(404, `not found: ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`);
}

/** The host part of a Host header: `[::1]:8081` → `::1`, `Example.org:80` → `example.org`. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.lastIndexOf(':');
  return (colon < 0 ? h : h.slice(0, colon)).replace(/\.$/, '');
}

function hostAllowed(header: string, allowed: ReadonlySet<string>): boolean {
  const name = hostName(header);
  if (name === '') return false;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) return true;
  if (name.includes(':') && /^[0-9a-f:.]+$/.test(name)) return true;
  return allowed.has(name);
}

function refused(status: 400 | 403 | 404 | 405 | 414, message: string): Route {
  return { kind: 'refused', status, message };
}

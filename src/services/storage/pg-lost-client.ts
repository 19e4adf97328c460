// A lost connection on PostgreSQL (docs/storage.md § A lost connection): what the server does with the
// transaction of a client that went silent. A partition or a dead host sends no FIN or RST, so by its own
// defaults the server keeps such a transaction open, with every lock it took, until the kernel's TCP
// keepalive gives up (two hours and more), and every other writer of those rows waits on it. Each pooled
// connection therefore asks the server, for that session only, to give up after `storage.lostClientTimeoutMs`:
//   - idle_in_transaction_session_timeout: the server waits for the client's next statement (the usual
//     case: a statement ended and its answer is lost);
//   - tcp_keepalives_idle / _interval / _count: the server waits for data while nothing is in flight
//     (a COPY whose rows stopped coming): half the bound idle, then five probes over the other half;
//   - tcp_user_timeout: the server's own data stays unacknowledged (an answer being sent). Last: a server
//     older than PostgreSQL 12 does not know it, and the statements before it still apply.
// The server aborts the transaction, so its writes never land (all or nothing) and its locks go.

/** Keepalive probes before the server drops the connection. */
const KEEPALIVE_PROBES = 5;

/** The session settings, as one statement for a new connection; undefined for 0 (the server's own). */
export function lostClientSettings(timeoutMs: number): string | undefined {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0) {
    throw new RangeError(`lostClientTimeoutMs must be a whole number of ms >= 0, got ${timeoutMs}`);
  }
  if (timeoutMs === 0) return undefined;
  // TCP keepalive settings are whole seconds, at least 1.
  const idleS = Math.max(1, Math.round(timeoutMs / 2 / 1000));
  const intervalS = Math.max(1, Math.round(timeoutMs / 2 / KEEPALIVE_PROBES / 1000));
  return [
    `SET idle_in_transaction_session_timeout = ${timeoutMs}`,
    `SET tcp_keepalives_idle = ${idleS}`,
    `SET tcp_keepalives_interval = ${intervalS}`,
    `SET tcp_keepalives_count = ${KEEPALIVE_PROBES}`,
    `SET tcp_user_timeout = ${timeoutMs}`,
  ].join('; ');
}

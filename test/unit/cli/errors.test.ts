// main()'s one-line forms of user mistakes (src/cli/errors.ts), as grpc-js and Node report them.
import { describe, expect, it } from 'vitest';
import { describeCliError } from '../../../src/cli/errors.js';
import { DashboardServerError } from '../../../src/services/dashboard/errors.js';

/** What bindServer (src/grpc/server.ts) throws when grpc-js cannot bind. */
function grpcBindError(address: string): Error {
  const inner = new Error(
    `No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use ${address}]`,
  );
  return new Error(`cannot listen on ${address}: ${inner.message}`, { cause: inner });
}

/** What net/http listen emits. */
function nodeListenError(code: string, address: string, port: number): Error {
  return Object.assign(new Error(`listen ${code}: address already in use ${address}:${port}`), {
    code,
    address,
    port,
    syscall: 'listen',
  });
}

describe('describeCliError', () => {
  it.each([
    [
      'up: the coordinator port',
      grpcBindError('127.0.0.1:50051'),
      'up',
      'address 127.0.0.1:50051 is already in use (EADDRINUSE): stop the other process or pass --listen',
    ],
    [
      'coordinator',
      grpcBindError('0.0.0.0:8080'),
      'coordinator',
      'address 0.0.0.0:8080 is already in use (EADDRINUSE): stop the other process or set COORDINATOR_LISTEN (or the deployment’s coordinator.listen)',
    ],
    [
      'worker',
      grpcBindError('127.0.0.1:9090'),
      'worker',
      'address 127.0.0.1:9090 is already in use (EADDRINUSE): stop the other process or set WORKER_LISTEN (or the deployment’s worker.listen)',
    ],
    [
      'a metrics listener (Node errno fields), wrapped',
      new Error('cannot serve metrics on 127.0.0.1:9464', {
        cause: nodeListenError('EADDRINUSE', '127.0.0.1', 9464),
      }),
      'up',
      'address 127.0.0.1:9464 is already in use (EADDRINUSE): stop the other process or choose another address in the config',
    ],
    [
      'an IPv6 listener',
      nodeListenError('EADDRINUSE', '::1', 9464),
      'worker',
      'address [::1]:9464 is already in use (EADDRINUSE): stop the other process or choose another address in the config',
    ],
    [
      'the dashboard of `up --dashboard ADDR`: the flag is blamed, not the config (issue 33)',
      new DashboardServerError(
        'DASHBOARD_LISTEN_FAILED',
        '127.0.0.1:8081',
        'cannot serve the dashboard on 127.0.0.1:8081 (--dashboard): listen EADDRINUSE',
        { cause: nodeListenError('EADDRINUSE', '127.0.0.1', 8081), configKey: '--dashboard' },
      ),
      'up',
      'address 127.0.0.1:8081 is already in use (EADDRINUSE): stop the other process or pass another --dashboard address',
    ],
    [
      'the dashboard address of the config: its key is named',
      new DashboardServerError(
        'DASHBOARD_LISTEN_FAILED',
        '127.0.0.1:8081',
        'cannot serve the dashboard on 127.0.0.1:8081 (observability.dashboard.listenAddr): listen EADDRINUSE',
        {
          cause: nodeListenError('EADDRINUSE', '127.0.0.1', 8081),
          configKey: 'observability.dashboard.listenAddr',
        },
      ),
      'coordinator',
      'address 127.0.0.1:8081 is already in use (EADDRINUSE): stop the other process or choose another address (observability.dashboard.listenAddr in the config)',
    ],
    [
      'a privileged port',
      nodeListenError('EACCES', '0.0.0.0', 80),
      'up',
      'not allowed to listen on 0.0.0.0:80 (EACCES): ports below 1024 need privileges; choose another port',
    ],
  ])('%s', (_name, err, command, line) => {
    expect(describeCliError(err, command)).toEqual({ line, exitCode: 2 });
  });

  it.each([
    ['a plain bug', new TypeError('x is undefined')],
    [
      'a file permission error (not a listen)',
      Object.assign(new Error('open /etc/x: EACCES'), { code: 'EACCES' }),
    ],
    ['a thrown string', 'boom'],
  ])('%s is not a known user mistake', (_name, err) => {
    expect(describeCliError(err, 'up')).toBeUndefined();
  });

  it('a cause chain that loops does not hang', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = a;
    expect(describeCliError(a, 'up')).toBeUndefined();
  });
});

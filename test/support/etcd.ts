// A real single-node etcd (Debian `etcd-server`, 3.4) for e2e tests. Each server gets its own free
// loopback client and peer ports (below the ephemeral range, so that nothing takes them while it is
// down: `restartablePort` in test/support/ports.ts) and a temp data dir, and runs with test-only
// settings: no fsync and a 10 ms heartbeat / 100 ms election timeout, so it is ready in about 0.1 s.
// `kill()` simulates a crash (SIGKILL, data kept) and `restart()` brings it back on the same ports and
// data dir, for reconnect tests.
import { accessSync, constants, readFileSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { NetHost } from './netns.js';
import { restartablePorts } from './ports.js';
import { captureOutput, isRunning, signalGroup, spawnTracked, stopGroup, waitForExit } from './processes.js';
import type { OutputTail } from './processes.js';

export interface StartEtcdOptions {
  /** etcd binary; default: `etcd` on PATH, else /usr/bin/etcd. */
  readonly binary?: string;
  /** Member name (default `n1`). */
  readonly name?: string;
  /** How long to wait for `/health` to report healthy (default 15 s). */
  readonly readyTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL (default 5 s). */
  readonly stopTimeoutMs?: number;
  /** Extra command-line flags. */
  readonly extraArgs?: readonly string[];
  /**
   * Serve clients over TLS (https URLs) with this certificate and key, and require a client certificate
   * signed by `ca` (`--client-cert-auth`). Files (PEM). The health check presents `cert` as its client
   * certificate, so it must allow client use.
   */
  readonly tls?: { readonly ca: string; readonly cert: string; readonly key: string };
  /** Run on this test host (test/support/netns.ts), listening on its address; default loopback here. */
  readonly host?: NetHost;
}

export interface EtcdServer {
  /** Client URL, e.g. `http://127.0.0.1:40123`. */
  readonly endpoint: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly dataDir: string;
  /** pid of the current etcd process (undefined once stopped or killed). */
  readonly pid: number | undefined;
  /** SIGTERM, SIGKILL after a bound, then remove the data dir. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, simulating a crash. The data dir is kept for `restart()`. */
  kill(): Promise<void>;
  /** Start again on the same ports and data dir (stops the running process gracefully first). */
  restart(): Promise<void>;
  /** The last few KB of etcd's output, for diagnostics. */
  output(): string;
}

const PORT_ATTEMPTS = 5;
const HEALTH_POLL_MS = 25;

export function findEtcdBinary(): string | undefined {
  const candidates = (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, 'etcd'));
  candidates.push('/usr/bin/etcd');
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export async function startEtcd(opts: StartEtcdOptions = {}): Promise<EtcdServer> {
  const binary = opts.binary ?? findEtcdBinary();
  if (binary === undefined) {
    throw new Error(
      'etcd not found on PATH or at /usr/bin/etcd; install it: sudo apt-get install -y etcd-server',
    );
  }
  const name = opts.name ?? 'n1';
  const readyTimeoutMs = opts.readyTimeoutMs ?? 15_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 5_000;
  const dataDir = await mkdtemp(join(tmpdir(), 'blockx-etcd-'));
  const tls = opts.tls;
  const scheme = tls === undefined ? 'http' : 'https';
  const healthTls =
    tls === undefined
      ? undefined
      : { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key) };

  const listenIp = opts.host?.ip ?? '127.0.0.1';
  const launch = async (clientPort: number, peerPort: number): Promise<Running> => {
    const client = `${scheme}://${listenIp}:${clientPort}`;
    const peer = `http://${listenIp}:${peerPort}`;
    const args = [
      '--name',
      name,
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      client,
      '--advertise-client-urls',
      client,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `${name}=${peer}`,
      '--unsafe-no-fsync',
      '--heartbeat-interval',
      '10',
      '--election-timeout',
      '100',
      ...(tls === undefined
        ? []
        : [
            '--cert-file',
            tls.cert,
            '--key-file',
            tls.key,
            '--trusted-ca-file',
            tls.ca,
            '--client-cert-auth',
          ]),
      ...(opts.extraArgs ?? []),
    ];
    const run = opts.host?.command(binary, args) ?? { cmd: binary, args };
    const child = spawnTracked(run.cmd, run.args, { env: etcdFreeEnv() });
    const tail = captureOutput(child);
    try {
      await waitHealthy(child, tail, client, readyTimeoutMs, healthTls);
    } catch (err) {
      await stopGroup(child, 'SIGKILL', 1_000);
      throw err;
    }
    return { child, tail };
  };

  let running: Running | undefined;
  let ports: number[] = [];
  for (let attempt = 1; running === undefined; attempt++) {
    ports = await restartablePorts(2);
    try {
      running = await launch(ports[0]!, ports[1]!);
    } catch (err) {
      if (!(err instanceof EtcdStartError && err.addressInUse) || attempt >= PORT_ATTEMPTS) {
        await rm(dataDir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  const clientPort = ports[0]!;
  const peerPort = ports[1]!;
  let lastOutput = '';
  let removed = false;

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (running === undefined) return;
    const current = running;
    running = undefined;
    await stopGroup(current.child, signal, stopTimeoutMs);
    lastOutput = current.tail.text();
  };

  return {
    endpoint: `${scheme}://${listenIp}:${clientPort}`,
    clientPort,
    peerPort,
    dataDir,
    get pid() {
      return running !== undefined && isRunning(running.child) ? running.child.pid : undefined;
    },
    async stop() {
      await halt('SIGTERM');
      if (!removed) {
        removed = true;
        await rm(dataDir, { recursive: true, force: true });
      }
    },
    async kill() {
      if (running === undefined) return;
      const current = running;
      running = undefined;
      const exited = waitForExit(current.child);
      signalGroup(current.child, 'SIGKILL');
      await exited;
      lastOutput = current.tail.text();
    },
    async restart() {
      if (removed) throw new Error('etcd was stopped and its data dir removed; start a new one instead');
      await halt('SIGTERM');
      running = await launch(clientPort, peerPort);
    },
    output() {
      return running !== undefined ? running.tail.text() : lastOutput;
    },
  };
}

interface Running {
  readonly child: ChildProcess;
  readonly tail: OutputTail;
}

class EtcdStartError extends Error {
  constructor(
    message: string,
    readonly addressInUse: boolean,
  ) {
    super(message);
    this.name = 'EtcdStartError';
  }
}

async function waitHealthy(
  child: ChildProcess,
  tail: OutputTail,
  client: string,
  timeoutMs: number,
  tls?: { ca: Buffer; cert: Buffer; key: Buffer },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  let lastProblem: string;
  for (;;) {
    if (spawnError !== undefined)
      throw new EtcdStartError(`could not spawn etcd: ${spawnError.message}`, false);
    if (!isRunning(child) && child.pid !== undefined) {
      // Give the pipes a moment to deliver the last lines before quoting them.
      await sleep(20);
      const output = tail.text();
      throw new EtcdStartError(
        `etcd exited (code ${child.exitCode}, signal ${child.signalCode}) before becoming healthy; output:\n${output}`,
        /address already in use/i.test(output),
      );
    }
    try {
      const { status, body } = await getHealth(`${client}/health`, tls);
      if (status === 200 && /"health"\s*:\s*"true"/.test(body)) return;
      lastProblem = `HTTP ${status}: ${body}`;
    } catch (err) {
      lastProblem = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) {
      throw new EtcdStartError(
        `etcd at ${client} not healthy after ${timeoutMs} ms (${lastProblem}); output:\n${tail.text()}`,
        /address already in use/i.test(tail.text()),
      );
    }
    await sleep(HEALTH_POLL_MS);
  }
}

/** GET with a 1 s timeout; over TLS with the given CA and client certificate. */
function getHealth(
  url: string,
  tls: { ca: Buffer; cert: Buffer; key: Buffer } | undefined,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage): void => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    };
    const req = tls === undefined ? httpGet(url, onResponse) : httpsGet(url, { ...tls }, onResponse);
    req.setTimeout(1_000, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

// etcd reads every ETCD_* variable as a flag; the code under test uses some (ETCD_ENDPOINTS) with other
// meanings, so none reach the server.
function etcdFreeEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('ETCD_')));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

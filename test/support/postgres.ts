// A throwaway PostgreSQL (Debian `postgresql`, 15) for e2e tests: initdb into a temp dir, then run the
// `postgres` server as a tracked child on a free loopback port with trust auth and fsync off. initdb and
// postgres refuse to run as root, so under root both run as the `postgres` user (spawn's uid/gid) on a
// temp dir that user owns.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import type { NetHost } from './netns.js';
import { freePort } from './ports.js';
import { captureOutput, isRunning, spawnTracked, stopGroup, waitForLine } from './processes.js';
import type { OutputTail } from './processes.js';

export interface StartPostgresOptions {
  /** Directory holding initdb and postgres; default: the newest /usr/lib/postgresql/<ver>/bin. */
  readonly binDir?: string;
  /** How long to wait for "ready to accept connections" (default 30 s). */
  readonly readyTimeoutMs?: number;
  /** How long `stop()` waits after SIGINT (fast shutdown) before SIGKILL (default 5 s). */
  readonly stopTimeoutMs?: number;
  /** The server's `max_connections` (default: PostgreSQL's own, 100). */
  readonly maxConnections?: number;
  /**
   * Run on this test host (test/support/netns.ts): listen on its address and trust clients of any
   * address (only the test network reaches it). Default: loopback here.
   */
  readonly host?: NetHost;
}

export interface PgServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  /** Directory holding the data dir and the Unix socket dir. */
  readonly baseDir: string;
  /** Connection URL for another database on this server. */
  urlFor(database: string): string;
  /** CREATE DATABASE `name` (lowercase letters, digits, `_`) and return its URL. */
  createDatabase(name: string): Promise<string>;
  /** Fast shutdown (SIGINT), SIGKILL after a bound, then remove the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** The last few KB of the server's log, for diagnostics. */
  output(): string;
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

const PORT_ATTEMPTS = 5;
const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function findPostgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((entry) => existsSync(join(root, entry, 'bin', 'initdb')))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

export async function startPostgres(opts: StartPostgresOptions = {}): Promise<PgServer> {
  const binDir = opts.binDir ?? findPostgresBinDir();
  if (binDir === undefined) {
    throw new Error(
      'PostgreSQL not found under /usr/lib/postgresql; install it: sudo apt-get install -y postgresql',
    );
  }
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 5_000;
  const runAs = process.getuid?.() === 0 ? await lookupUser('postgres') : undefined;
  const listenIp = opts.host?.ip ?? '127.0.0.1';
  // Under root, TMPDIR may point somewhere the postgres user cannot reach; /tmp is world-traversable.
  const baseDir = await mkdtemp(join(runAs === undefined ? tmpdir() : '/tmp', 'blockx-pg-'));
  const dataDir = join(baseDir, 'data');
  const socketDir = join(baseDir, 'sock');
  const spawnOpts = { cwd: baseDir, env: pgFreeEnv(), ...(runAs ?? {}) };

  let child: ChildProcess | undefined;
  let serverLog: OutputTail | undefined;
  let port = 0;
  try {
    await mkdir(socketDir);
    if (runAs !== undefined) {
      await chown(baseDir, runAs.uid, runAs.gid);
      await chown(socketDir, runAs.uid, runAs.gid);
    }
    const initdb = spawnTracked(
      join(binDir, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      spawnOpts,
    );
    const initdbOutput = captureOutput(initdb);
    const [code] = await onceClosed(initdb);
    if (code !== 0) throw new Error(`initdb failed (exit ${code}):\n${initdbOutput.text()}`);
    if (opts.host !== undefined)
      await appendFile(join(dataDir, 'pg_hba.conf'), 'host all all 0.0.0.0/0 trust\n');

    for (let attempt = 1; child === undefined; attempt++) {
      port = await freePort();
      const serverArgs = [
        '-D',
        dataDir,
        '-c',
        `listen_addresses=${listenIp}`,
        '-c',
        `port=${port}`,
        '-k',
        socketDir,
        ...(opts.maxConnections === undefined ? [] : ['-c', `max_connections=${opts.maxConnections}`]),
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
      ];
      // Entering a namespace needs root: nsenter enters it, then drops to the postgres user.
      const server =
        opts.host === undefined
          ? spawnTracked(join(binDir, 'postgres'), serverArgs, spawnOpts)
          : ((run) => spawnTracked(run.cmd, run.args, { cwd: baseDir, env: pgFreeEnv() }))(
              opts.host.command(join(binDir, 'postgres'), serverArgs, runAs),
            );
      const log = captureOutput(server);
      try {
        await waitForLine(server, /database system is ready to accept connections/, readyTimeoutMs);
        child = server;
        serverLog = log;
      } catch (err) {
        await stopGroup(server, 'SIGKILL', 1_000);
        const inUse = /could not bind|address already in use/i.test(log.text());
        if (!inUse || attempt >= PORT_ATTEMPTS) {
          throw new Error(`postgres did not start: ${err instanceof Error ? err.message : String(err)}`, {
            cause: err,
          });
        }
      }
    }
  } catch (err) {
    if (child !== undefined) await stopGroup(child, 'SIGKILL', 1_000);
    await rm(baseDir, { recursive: true, force: true });
    throw err;
  }

  const server = child;
  const log = serverLog;
  let stopped = false;
  const urlFor = (database: string): string => `postgres://postgres@${listenIp}:${port}/${database}`;

  return {
    url: urlFor('postgres'),
    port,
    baseDir,
    get pid() {
      return isRunning(server) ? server.pid : undefined;
    },
    urlFor,
    createDatabase: (name) => createDatabaseAt(urlFor('postgres'), name),
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopGroup(server, 'SIGINT', stopTimeoutMs);
      await rm(baseDir, { recursive: true, force: true });
    },
    output() {
      return log?.text() ?? '';
    },
  };
}

/** CREATE DATABASE `name` (lowercase letters, digits, `_`) on the server of `serverUrl`; returns its URL. */
export async function createDatabaseAt(serverUrl: string, name: string): Promise<string> {
  await onDatabaseServer(serverUrl, `CREATE DATABASE "${checkedName(name)}"`);
  return databaseUrl(serverUrl, name);
}

/** DROP DATABASE `name` on the server of `serverUrl`, closing its connections first. */
export async function dropDatabaseAt(serverUrl: string, name: string): Promise<void> {
  await onDatabaseServer(serverUrl, `DROP DATABASE IF EXISTS "${checkedName(name)}" WITH (FORCE)`);
}

/** The URL of database `name` on the server of `serverUrl`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${checkedName(name)}`;
  return url.toString();
}

function checkedName(name: string): string {
  if (!DATABASE_NAME.test(name)) throw new Error(`invalid test database name ${JSON.stringify(name)}`);
  return name;
}

async function onDatabaseServer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function onceClosed(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve([code, signal]));
  });
}

function lookupUser(name: string): Promise<RunAs> {
  return new Promise((resolve, reject) => {
    execFile('getent', ['passwd', name], (err, stdout) => {
      const fields = stdout.trim().split(':');
      const uid = Number(fields[2]);
      const gid = Number(fields[3]);
      if (err !== null || !Number.isInteger(uid) || !Number.isInteger(gid) || fields.length < 4) {
        reject(new Error(`running as root but there is no '${name}' user to run PostgreSQL as`));
        return;
      }
      resolve({ uid, gid });
    });
  });
}

// libpq-style PG* variables in the environment would redirect the server's own tools; keep them out.
function pgFreeEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PG')));
}

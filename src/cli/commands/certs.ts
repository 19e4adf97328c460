// `blockx certs [--dir DIR] [--name NAME] [--host H]... [--client | --role ROLE...] [--days N]`: a
// development CA and the certificates TLS needs, in one step (docs/security.md § TLS and
// authentication, § Roles).
//
// The first run creates DIR/ca.pem and DIR/ca-key.pem; every run issues NAME.pem and NAME-key.pem
// signed by that CA: for a service (server and client use) valid for localhost, 127.0.0.1, ::1, this
// host's name and every --host, or with --client a submitter's certificate (client use only). --role
// writes roles into the certificate: a person's (admin, deployer, submitter, viewer) makes a client
// certificate, a service's (coordinator, worker) a service certificate. Keys are written 0600, in a
// 0700 directory. It prints the `tls:` block to put in blockx.config.yaml.
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { CLIENT_ROLES, isRole, ROLES, type Role } from '../../kernel/roles.js';
import { EXIT, UsageError, type CliIo } from '../io.js';

interface CertsOptions {
  dir: string;
  name: string;
  host: string[];
  client?: boolean;
  role: string[];
  days: string;
}

const DEFAULT_DIR = '.blockx/certs';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const HOST =
  /^(\[?[0-9a-fA-F:.]+\]?|[A-Za-z0-9*]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)$/;

export function registerCertsCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('certs')
    .description('make a development CA and TLS certificates for services and clients (docs/security.md)')
    .option('--dir <dir>', 'where the CA and certificates go', DEFAULT_DIR)
    .option('--name <name>', 'file name of the certificate to issue (NAME.pem, NAME-key.pem)', 'node')
    .option(
      '--host <host>',
      'an extra address the certificate is valid for (repeatable): the IP or DNS name other hosts dial',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option(
      '--client',
      'a client certificate for a submitter (no server use, no hosts); same as --role submitter',
    )
    .option(
      '--role <role>',
      `a role the certificate carries (repeatable): ${ROLES.join(', ')} (docs/security.md § Roles)`,
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--days <n>', 'validity of the certificate (the CA gets 10 times as long)', '365')
    .action(async (opts: CertsOptions) => setExit(await certs(opts, io)));
}

async function certs(opts: CertsOptions, io: CliIo): Promise<number> {
  const days = Number(opts.days);
  if (!Number.isInteger(days) || days < 1 || days > 3650)
    throw new UsageError(`--days must be an integer from 1 to 3650, got ${opts.days}`);
  if (!NAME.test(opts.name) || opts.name === 'ca')
    throw new UsageError(`--name must be a file name of letters, digits, . _ - (not "ca"), got ${opts.name}`);
  for (const h of opts.host) {
    if (!HOST.test(h))
      throw new UsageError(`--host must be a DNS name or an IP address, got ${JSON.stringify(h)}`);
  }
  for (const r of opts.role) {
    if (!isRole(r))
      throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(r)}`);
  }
  if (opts.client && opts.role.length > 0)
    throw new UsageError('--client and --role do not go together (--client is --role submitter)');
  const roles = opts.client ? ['submitter'] : [...new Set(opts.role)];
  // A certificate with only a person's roles is a client certificate; one naming a service is a service's.
  const client = roles.length > 0 && roles.every((r) => CLIENT_ROLES.includes(r as Role));
  if (client && opts.host.length > 0) throw new UsageError('client certificates name no hosts');
  const { createCa, issueCertificate, writeKeyAndCert } = await import('../certs/dev-ca.js');
  const dir = path.resolve(io.cwd(), opts.dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const caFile = path.join(dir, 'ca.pem');
  const caKeyFile = path.join(dir, 'ca-key.pem');
  let ca: { key: string; cert: string };
  if (existsSync(caFile) && existsSync(caKeyFile)) {
    ca = { cert: readFileSync(caFile, 'utf8'), key: readFileSync(caKeyFile, 'utf8') };
    io.stdout(`using the CA in ${caFile}\n`);
  } else {
    ca = createCa({ commonName: 'BlockX development CA', days: days * 10 });
    writeKeyAndCert(dir, 'ca', ca);
    io.stdout(`created a CA: ${caFile} (its key ${caKeyFile} signs every certificate: keep it private)\n`);
  }
  const hosts = client
    ? []
    : [
        ...new Set([
          'localhost',
          '127.0.0.1',
          '::1',
          hostname(),
          ...opts.host.map((h) => h.replace(/^\[|\]$/g, '')),
        ]),
      ];
  const issued = issueCertificate(ca, {
    commonName: client ? `blockx client ${opts.name}` : `blockx ${opts.name}`,
    hosts,
    usage: client ? 'client' : 'service',
    // `--client` alone writes no role name: the certificate reads as a submitter either way, and stays
    // the same as before roles existed.
    roles: opts.client ? [] : roles,
    days,
  });
  const { cert: certFile, key: keyFile } = writeKeyAndCert(dir, opts.name, issued);
  io.stdout(
    `issued ${certFile} and ${keyFile}` +
      (client ? ' (client use)' : ` for ${hosts.join(', ')} (server and client use)`) +
      (roles.length > 0 ? `, roles: ${roles.join(', ')}\n` : '\n'),
  );
  const rel = (f: string) => path.relative(io.cwd(), f) || f;
  io.stdout(
    `\nTurn TLS on with this block in blockx.config.yaml (or BLOCKX_TLS_CA, BLOCKX_TLS_CERT, BLOCKX_TLS_KEY):\n` +
      `tls:\n  ca: ${rel(caFile)}\n  cert: ${rel(certFile)}\n  key: ${rel(keyFile)}\n`,
  );
  return EXIT.OK;
}

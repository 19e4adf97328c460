// Roles: who may call what (docs/security.md § Roles). The table of methods and the roles they accept,
// and how a certificate says which roles it holds. The gRPC servers check it in one interceptor
// (src/grpc/authorization.ts); test/unit/kernel/roles.test.ts fails on a method of a BlockX service
// missing from the table (a new RPC is refused to everyone until it is listed).
//
// Roles travel in the certificate as URI subject alternative names `urn:blockx:role:<role>` (`blockx
// certs --role ROLE` writes them). A certificate without any such name keeps the meaning it had before
// roles existed: a service certificate (serverAuth usage) acts as every service and as admin, a client
// certificate as a submitter.

import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';

/** The roles a certificate can carry (docs/security.md § Roles). */
export const ROLES = ['admin', 'deployer', 'submitter', 'viewer', 'coordinator', 'worker'] as const;
export type Role = (typeof ROLES)[number];

/** Roles a person holds; the other two are the services' own. */
export const CLIENT_ROLES: readonly Role[] = ['admin', 'deployer', 'submitter', 'viewer'];

/** The URI SAN prefix that carries a role. */
export const ROLE_URI_PREFIX = 'urn:blockx:role:';

/** The extended-key-usage OID of TLS server authentication (RFC 5280 § 4.2.1.12). */
export const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';

/** What a certificate without role names holds (see the header). */
const LEGACY_SERVICE_ROLES: readonly Role[] = ['admin', 'coordinator', 'worker'];
const LEGACY_CLIENT_ROLES: readonly Role[] = ['submitter'];

const SUBMIT: readonly Role[] = ['submitter', 'coordinator', 'admin'];
// The Coordinator views to serve the dashboard's feed (WorkerAdminService/ListRecentTasks); a Worker needs none.
const VIEW: readonly Role[] = ['viewer', 'submitter', 'deployer', 'coordinator', 'admin'];
const DEPLOY: readonly Role[] = ['deployer', 'admin'];
/** Any authenticated caller. */
const ANYONE: readonly Role[] = ROLES;

/**
 * The roles each method accepts, by full method path. Submitting covers everything a task needs
 * (reserve, submit, run, watch, read its result, report the job's progress); the Coordinator holds it to
 * act for its clients. Viewing reads the cluster's state. Deploying changes the code every Worker runs.
 */
export const METHOD_ROLES: Readonly<Record<string, readonly Role[]>> = Object.freeze({
  '/blockx.coordinator.v1.CoordinatorService/ReserveWorkerSlot': SUBMIT,
  '/blockx.coordinator.v1.CoordinatorService/ReserveWorkerSlots': SUBMIT,
  '/blockx.bundlecoordinator.v1.BundleCoordinatorService/ReserveWorkerSlot': SUBMIT,
  '/blockx.bundlecoordinator.v1.BundleCoordinatorService/ReserveWorkerSlots': SUBMIT,
  '/blockx.coordinator.v1.CoordinatorJobsService/ReportBackfillProgress': SUBMIT,
  '/blockx.coordinator.v1.CoordinatorAdminService/GetClusterStatus': VIEW,
  '/blockx.coordinator.v1.CoordinatorAdminService/ListFunctions': VIEW,
  '/blockx.coordinator.v1.CoordinatorAdminService/DeployFunctions': DEPLOY,
  '/blockx.coordinator.v1.CoordinatorAdminService/UseFunctions': DEPLOY,
  '/blockx.worker.v1.WorkerService/RequestTaskSlot': SUBMIT,
  '/blockx.worker.v1.WorkerService/RequestTaskSlots': SUBMIT,
  '/blockx.worker.v1.WorkerService/SubmitTask': SUBMIT,
  '/blockx.worker.v1.WorkerService/RunTasks': SUBMIT,
  '/blockx.worker.v1.WorkerService/GetTaskResult': SUBMIT,
  '/blockx.worker.v1.WorkerService/WatchTasks': SUBMIT,
  '/blockx.worker.v1.WorkerAdminService/ListRecentTasks': VIEW,
  '/blockx.worker.v1.WorkerAdminService/DescribeServing': VIEW,
  '/grpc.health.v1.Health/Check': ANYONE,
  '/grpc.health.v1.Health/Watch': ANYONE,
  '/grpc.health.v1.Health/List': ANYONE,
});

/** Whether `value` names a role. */
export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** The URI SAN that carries `role`. */
export function roleUri(role: Role): string {
  return `${ROLE_URI_PREFIX}${role}`;
}

function uriNames(cert: PeerCertificate): string[] {
  // Node renders the SANs as `DNS:a, IP Address:1.2.3.4, URI:urn:…`; a name holding ", " is quoted.
  const sans = typeof cert.subjectaltname === 'string' ? cert.subjectaltname : '';
  return sans
    .split(', ')
    .filter((entry) => entry.startsWith('URI:'))
    .map((entry) => entry.slice('URI:'.length));
}

/** Whether the certificate's extended key usage includes TLS server authentication. */
export function isServiceCertificate(cert: PeerCertificate): boolean {
  const usage = (cert as PeerCertificate & { ext_key_usage?: unknown }).ext_key_usage;
  return Array.isArray(usage) && usage.includes(SERVER_AUTH_OID);
}

/**
 * The roles `cert` carries: its `urn:blockx:role:` names (unknown role names are ignored, so a
 * certificate naming only unknown roles holds none), or, when it has none, the legacy meaning (header).
 */
export function rolesOfCertificate(cert: PeerCertificate): readonly Role[] {
  const named = uriNames(cert).filter((uri) => uri.startsWith(ROLE_URI_PREFIX));
  if (named.length === 0) return isServiceCertificate(cert) ? LEGACY_SERVICE_ROLES : LEGACY_CLIENT_ROLES;
  return [...new Set(named.map((uri) => uri.slice(ROLE_URI_PREFIX.length)).filter(isRole))];
}

/** rolesOfCertificate for a certificate read with Node's X509Certificate (a deploy's signer). */
export function rolesOfX509(cert: X509Certificate): readonly Role[] {
  return rolesOfCertificate({
    subjectaltname: cert.subjectAltName ?? '',
    ext_key_usage: cert.keyUsage ?? [],
  } as unknown as PeerCertificate);
}

/**
 * The roles every route of the dashboard accepts (page, assets, `/api/snapshot`, `/api/events`): it is
 * read-only, so viewing.
 */
export const DASHBOARD_ROLES: readonly Role[] = VIEW;

/**
 * Roles that see every client's tasks and jobs (ListRecentTasks, the dashboard); a caller holding none of
 * them sees only its own (docs/security.md § Roles). The Coordinator holds one because it feeds the
 * dashboard, which then filters per viewer.
 */
export const SEES_EVERY_CLIENT: readonly Role[] = ['viewer', 'admin', 'coordinator'];

/** Whether `roles` include one that sees every client's tasks (SEES_EVERY_CLIENT). */
export function seesEveryClient(roles: readonly Role[]): boolean {
  return roles.some((r) => SEES_EVERY_CLIENT.includes(r));
}

/**
 * Why `roles` may not call `path`, or undefined when they may. A method missing from METHOD_ROLES is
 * refused to everyone. `accepted` overrides the table (the dashboard's routes).
 */
export function permissionProblem(
  path: string,
  roles: readonly Role[],
  accepted: readonly Role[] | undefined = METHOD_ROLES[path],
): string | undefined {
  if (accepted === undefined) return `${path} is not open to any role`;
  if (roles.some((r) => accepted.includes(r))) return undefined;
  const needed = accepted.filter((r) => CLIENT_ROLES.includes(r));
  const held = roles.length > 0 ? roles.join(', ') : 'none';
  return (
    `${path} needs the role ${needed.join(' or ')} (docs/security.md § Roles); ` +
    `this certificate holds: ${held}`
  );
}

// The roles of a certificate, by its fingerprint: a connection's certificate is parsed once, not per call.
const rolesByFingerprint = new Map<string, readonly Role[]>();
const MAX_CACHED_CERTIFICATES = 10_000;

/** rolesOfCertificate, remembered per certificate fingerprint. */
export function cachedRolesOf(cert: PeerCertificate): readonly Role[] {
  const key = cert.fingerprint256;
  if (typeof key !== 'string' || key === '') return rolesOfCertificate(cert);
  let roles = rolesByFingerprint.get(key);
  if (roles === undefined) {
    roles = rolesOfCertificate(cert);
    if (rolesByFingerprint.size >= MAX_CACHED_CERTIFICATES) rolesByFingerprint.clear();
    rolesByFingerprint.set(key, roles);
  }
  return roles;
}

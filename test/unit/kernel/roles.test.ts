// Roles (docs/security.md § Roles): the table covers every method BlockX serves and nothing else, each
// role may call exactly what the docs say, and a certificate's roles are read from the names
// `blockx certs --role` writes (real certificates from src/cli/certs/dev-ca.ts, read with Node's X.509).
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { service as healthService } from 'grpc-health-check';
import { describe, expect, it } from 'vitest';
import { createCa, issueCertificate } from '../../../src/cli/certs/dev-ca.js';
import {
  bundleCoordinatorServiceDefinition,
  coordinatorAdminServiceDefinition,
  coordinatorJobsServiceDefinition,
  coordinatorServiceDefinition,
  workerAdminServiceDefinition,
  workerServiceDefinition,
} from '../../../src/grpc/proto.js';
import { callerIdentity } from '../../../src/grpc/peer-identity.js';
import * as grpc from '@grpc/grpc-js';
import {
  DASHBOARD_ROLES,
  METHOD_ROLES,
  permissionProblem,
  ROLES,
  rolesOfCertificate,
  type Role,
} from '../../../src/kernel/roles.js';

const served = [
  workerServiceDefinition,
  workerAdminServiceDefinition,
  coordinatorServiceDefinition,
  bundleCoordinatorServiceDefinition,
  coordinatorAdminServiceDefinition,
  coordinatorJobsServiceDefinition,
  healthService,
].flatMap((definition) => Object.values(definition).map((m) => (m as { path: string }).path));

const ca = createCa({ commonName: 'roles test CA', days: 1 });

/** A certificate as a TLS socket's getPeerCertificate() describes it (the fields roles read). */
function peer(
  usage: 'service' | 'client',
  roles?: readonly string[],
  commonName = 'someone',
): PeerCertificate {
  const kc = issueCertificate(ca, {
    commonName,
    hosts: usage === 'service' ? ['127.0.0.1'] : [],
    usage,
    days: 1,
    ...(roles ? { roles } : {}),
  });
  const x = new X509Certificate(kc.cert);
  return {
    subject: { CN: commonName },
    subjectaltname: x.subjectAltName,
    ext_key_usage: x.keyUsage,
    fingerprint256: x.fingerprint256,
  } as unknown as PeerCertificate;
}

describe('the roles table', () => {
  it('names every method a BlockX server serves, and nothing else', () => {
    expect(Object.keys(METHOD_ROLES).sort()).toEqual([...new Set(served)].sort());
  });

  it('refuses a method missing from the table to every role', () => {
    expect(permissionProblem('/blockx.worker.v1.WorkerService/Unlisted', ROLES)).toMatch(
      /is not open to any role/,
    );
  });

  const S = '/blockx.worker.v1.WorkerService/SubmitTask';
  const R = '/blockx.coordinator.v1.CoordinatorService/ReserveWorkerSlot';
  const J = '/blockx.coordinator.v1.CoordinatorJobsService/ReportBackfillProgress';
  const D = '/blockx.coordinator.v1.CoordinatorAdminService/DeployFunctions';
  const U = '/blockx.coordinator.v1.CoordinatorAdminService/UseFunctions';
  const V = '/blockx.coordinator.v1.CoordinatorAdminService/GetClusterStatus';
  const L = '/blockx.worker.v1.WorkerAdminService/ListRecentTasks';
  const H = '/grpc.health.v1.Health/Check';
  // role → [submit/reserve/report, deploy/use, view, health]
  const cases: [Role, boolean, boolean, boolean][] = [
    ['admin', true, true, true],
    ['deployer', false, true, true],
    ['submitter', true, false, true],
    ['viewer', false, false, true],
    ['coordinator', true, false, true],
    ['worker', false, false, false],
  ];
  it.each(cases)('%s: submit %s, deploy %s, view %s', (role, submit, deploy, view) => {
    const may = (path: string) => permissionProblem(path, [role]) === undefined;
    expect([may(S), may(R), may(J)]).toEqual([submit, submit, submit]);
    expect([may(D), may(U)]).toEqual([deploy, deploy]);
    expect([may(V), may(L)]).toEqual([view, view]);
    expect(may(H)).toBe(true);
    expect(permissionProblem('the dashboard', [role], DASHBOARD_ROLES) === undefined).toBe(view);
  });

  it('says which role is needed and which the certificate holds', () => {
    expect(permissionProblem(D, ['submitter'])).toBe(
      `${D} needs the role deployer or admin (docs/security.md § Roles); this certificate holds: submitter`,
    );
    expect(permissionProblem(R, [])).toMatch(/needs the role submitter or admin .*holds: none$/);
  });
});

describe('the roles of a certificate', () => {
  it('reads the role names blockx certs --role writes', () => {
    expect(rolesOfCertificate(peer('client', ['deployer']))).toEqual(['deployer']);
    expect([...rolesOfCertificate(peer('client', ['viewer', 'deployer']))].sort()).toEqual([
      'deployer',
      'viewer',
    ]);
    expect(rolesOfCertificate(peer('service', ['worker']))).toEqual(['worker']);
  });

  it('gives a certificate without role names its meaning from before roles', () => {
    expect(rolesOfCertificate(peer('client'))).toEqual(['submitter']);
    expect(rolesOfCertificate(peer('service'))).toEqual(['admin', 'coordinator', 'worker']);
  });

  it('ignores unknown role names, so a certificate naming only those holds none', () => {
    expect(rolesOfCertificate(peer('service', ['root', 'admin ']))).toEqual([]);
  });
});

describe('forwarding a client identity', () => {
  const call = (cert: PeerCertificate) => {
    const metadata = new grpc.Metadata();
    metadata.set('blockx-client', 'alice');
    return { metadata, getAuthContext: () => ({ sslPeerCertificate: cert }) };
  };

  it.each([
    ['a service certificate without roles (coordinator)', peer('service', undefined, 'node'), 'alice'],
    ['a coordinator certificate', peer('service', ['coordinator'], 'coord'), 'alice'],
    ['a worker certificate', peer('service', ['worker'], 'w1'), 'w1'],
    ['an admin certificate', peer('client', ['admin'], 'root'), 'root'],
    ['a submitter certificate', peer('client', undefined, 'mallory'), 'mallory'],
  ])('by %s gives %s', (_name, cert, identity) => {
    expect(callerIdentity(call(cert))).toBe(identity);
  });
});

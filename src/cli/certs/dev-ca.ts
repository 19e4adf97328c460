// A development certificate authority for `blockx certs` (docs/security.md § TLS and authentication):
// one CA, and certificates it signs for BlockX services (server and client use) and for submitters
// (client use only). Keys are RSA 2048, made by Node's crypto; node-forge builds and signs the X.509
// structures (Node has no API to create certificates). This is for development and small clusters; a
// production cluster issues its certificates from its own PKI and only points `tls.*` at the files.
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';

export interface KeyAndCert {
  /** PEM private key (PKCS#8). */
  readonly key: string;
  /** PEM certificate. */
  readonly cert: string;
}

export interface IssueOptions {
  /** Subject common name. */
  readonly commonName: string;
  /** DNS names and IP addresses the certificate is valid for (server use). */
  readonly hosts: readonly string[];
  /** 'service': server and client authentication; 'client': client authentication only. */
  readonly usage: 'service' | 'client';
  /**
   * Roles written as `urn:blockx:role:<role>` URI names (docs/security.md § Roles); none keeps the
   * meaning of a certificate from before roles (a service acts as every service and admin, a client
   * as a submitter).
   */
  readonly roles?: readonly string[];
  readonly days: number;
  /** Now, for tests. */
  readonly now?: Date;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

function newKeyPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privatePem: privateKey, publicPem: publicKey };
}

function validity(cert: forge.pki.Certificate, now: Date, days: number): void {
  // A minute of slack backwards, for clocks slightly behind this one.
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + days * 86_400_000);
}

function serial(): string {
  // Positive (leading bit clear), 16 bytes: unique without bookkeeping.
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

/** A self-signed CA that may sign end-entity certificates only (path length 0). */
export function createCa(opts: { commonName: string; days: number; now?: Date }): KeyAndCert {
  const keys = newKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicPem);
  cert.serialNumber = serial();
  validity(cert, opts.now ?? new Date(), opts.days);
  const subject = [{ name: 'commonName', value: opts.commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privatePem), forge.md.sha256.create());
  return { key: keys.privatePem, cert: forge.pki.certificateToPem(cert) };
}

/** A certificate signed by `ca` for `opts.hosts` (IP or DNS subject alternative names). */
export function issueCertificate(ca: KeyAndCert, opts: IssueOptions): KeyAndCert {
  const keys = newKeyPair();
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicPem);
  cert.serialNumber = serial();
  validity(cert, opts.now ?? new Date(), opts.days);
  cert.setSubject([{ name: 'commonName', value: opts.commonName }]);
  cert.setIssuer(caCert.subject.attributes);
  const altNames = [
    ...opts.hosts.map((h) => (IPV4.test(h) || h.includes(':') ? { type: 7, ip: h } : { type: 2, value: h })),
    // type 6: uniformResourceIdentifier (RFC 5280 § 4.2.1.6).
    ...(opts.roles ?? []).map((role) => ({ type: 6, value: `urn:blockx:role:${role}` })),
  ];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: opts.usage === 'service', clientAuth: true },
    ...(altNames.length > 0 ? [{ name: 'subjectAltName', altNames }] : []),
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.key), forge.md.sha256.create());
  return { key: keys.privatePem, cert: forge.pki.certificateToPem(cert) };
}

/** Whether `cert` (PEM) was signed by `caCert` (PEM) and names `host` (checks with Node's own X.509). */
export function certificateCovers(cert: string, caCert: string, host: string): boolean {
  const leaf = new X509Certificate(cert);
  const ca = new X509Certificate(caCert);
  if (!leaf.checkIssued(ca) || !leaf.verify(ca.publicKey)) return false;
  return IPV4.test(host) || host.includes(':')
    ? leaf.checkIP(host) !== undefined
    : leaf.checkHost(host) !== undefined;
}

/**
 * Writes `kc` as DIR/NAME.pem (0644) and DIR/NAME-key.pem (0600, also when the file already existed with
 * a looser mode); returns the two paths.
 */
export function writeKeyAndCert(dir: string, name: string, kc: KeyAndCert): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}-key.pem`);
  writeFileSync(key, kc.key, { mode: 0o600 });
  chmodSync(key, 0o600);
  writeFileSync(cert, kc.cert, { mode: 0o644 });
  return { cert, key };
}

// Certificates for tests and benches that turn TLS on: a fresh CA (the code behind `blockx certs`,
// src/cli/certs/dev-ca.ts) and a service certificate for 127.0.0.1 and localhost, written to a folder as
// the three files the `tls` config key names (docs/security.md § TLS and authentication).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCa, issueCertificate, writeKeyAndCert, type KeyAndCert } from '../../src/cli/certs/dev-ca.js';

export interface LoopbackTls {
  readonly ca: KeyAndCert;
  /** Server and client use, valid for 127.0.0.1 and localhost. */
  readonly node: KeyAndCert;
  /** DIR/ca.pem, DIR/node.pem, DIR/node-key.pem: what BLOCKX_TLS_CA / _CERT / _KEY point at. */
  readonly files: { readonly ca: string; readonly cert: string; readonly key: string };
  /**
   * Another certificate from the same CA (`hosts` empty: client use only), its files written too;
   * `roles` as `blockx certs --role` writes them (docs/security.md § Roles).
   */
  issue(
    name: string,
    hosts?: readonly string[],
    roles?: readonly string[],
  ): KeyAndCert & { files: { cert: string; key: string } };
}

export function loopbackTls(dir: string, commonName = 'BlockX test CA'): LoopbackTls {
  const ca = createCa({ commonName, days: 1 });
  const issue = (name: string, hosts: readonly string[] = [], roles: readonly string[] = []) => {
    const kc = issueCertificate(ca, {
      commonName: name,
      hosts,
      usage: hosts.length > 0 ? 'service' : 'client',
      roles,
      days: 1,
    });
    return { ...kc, files: writeKeyAndCert(dir, name, kc) };
  };
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  const node = issue('node', ['127.0.0.1', 'localhost']);
  return { ca, node, files: { ca: caFile, ...node.files }, issue };
}
